"""The ``docker`` sandbox backend: containers of a Docker daemon, one persistent shell on each one's attach socket.

``backend`` holds the registry entry (``DockerBackend``) and its lifecycle hooks; ``sandbox`` the
``DockerSandbox``; the other modules are its parts. Importing this package imports none of them.
"""
