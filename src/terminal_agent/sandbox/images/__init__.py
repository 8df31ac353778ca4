"""Images: the offline base image, the alias table, content-hash task images, and exports for bwrap.

``manager`` (``ImageManager``, ``ensure_task_image``), ``base_image`` (debootstrap), ``aliases`` (public
names -> local images, ``FROM`` rewriting), ``host_build_settings`` (opt-in proxy / CA / index for builds),
``host_trust`` (opt-in extra CAs and proxy variables as a first layer of every task image),
``export`` (``export_images``, ``ExportedImages``: layers on disk for daemon-less backends).
"""
