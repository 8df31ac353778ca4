"""The ``bwrap`` sandbox backend: bubblewrap sandboxes on an overlay of exported image layers (no daemon).

``backend`` holds the registry entry (``BwrapBackend``) and its lifecycle hooks; ``sandbox`` the
``BwrapSandbox``; ``settings`` its section of ``SandboxConfig``. Importing this package imports none of them.
"""
