"""Scale-out behind HAProxy: N worker processes serving one ACP app, HAProxy in front.

``worker`` is the app each process serves (an echo agent that says which process it is),
``haproxy`` renders the load balancer's configuration (the one ``docs/deploying.md``
shows) and reads its counters, ``cluster`` starts the workers and HAProxy on loopback,
``client`` connects through it. The benchmark ``python -m bench.scaleout`` uses them too.
"""
