"""The ``ray`` sandbox backend: Docker sandboxes on the nodes of a Ray cluster, served through host actors.

``backend`` holds the registry entry (``RayBackend``), the fleet of hosts and its lifecycle hooks; ``host``
the actor; ``proxy`` the driver's ``RaySandbox``; ``settings`` its section of ``SandboxConfig``. Importing
this package imports none of them (nor Ray).
"""
