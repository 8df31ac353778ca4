"""Images: the offline base, public images aliased onto local ones, and task images cached by content.

A task image is built (:mod:`~terminal_agent.sandbox.images.image_build`) from the task's Dockerfile (``FROM`` lines resolved: present locally, else
pulled with a short timeout, else an alias from :mod:`~terminal_agent.sandbox.images.aliases`) and
``task.files`` as the build context - never the tests or the solution, which reach the container
only after the episode. Its tag is a content hash, ``terminal-agent/task-<id>:<hash12>``, so an
unchanged task is built once and every later request is a cache hit. A lock per tag (a thread
lock in-process plus an ``fcntl`` file lock across processes) makes concurrent requests build once.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import docker

from terminal_agent.errors import ImageBuildError, ImageError, ImageNotAvailableError
from terminal_agent.sandbox.images.base_image import (
    BASE_IMAGE,
    MANAGED_LABEL,
    build_base_image,
    build_debootstrap_image,
    missing_debian_packages,
)
from terminal_agent.sandbox.images.host_build_settings import HostBuildSettings
from terminal_agent.sandbox.images.host_trust import (
    HOST_TRUST_LABEL,
    HostTrust,
    ca_setting,
    derived_base_tag,
    resolve_host_trust,
)
from terminal_agent.sandbox.images.aliases import (
    ALIASED_IMAGES_HELP,
    SUBSTITUTE_DEBOOTSTRAPS,
    SUBSTITUTE_DOCKERFILES,
    find_alias,
    find_from_images,
    rewrite_from_lines,
    split_image_reference,
)
from terminal_agent.sandbox.images.image_build import Progress, build_with_engine_api, build_with_secrets, content_hash
from terminal_agent.tasks.model import FileContent, Task

logger = logging.getLogger(__name__)

TASK_LABEL = "terminal-agent.task-id"
HASH_LABEL = "terminal-agent.content-hash"
IMAGE_PREFIX = "terminal-agent/"
LOG_TAIL_LINES = 40
_UNPULLABLE_TTL_S = 300.0


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/terminal-agent`` (``~/.cache/terminal-agent``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "terminal-agent"


def task_repository(task_id: str) -> str:
    """``terminal-agent/task-<id>``, the id lowercased and squeezed into Docker's repository grammar."""
    component = re.sub(
        r"[^a-z0-9]+",
        lambda m: m.group(0) if m.group(0) in (".", "_", "__") or set(m.group(0)) == {"-"} else "-",
        task_id.lower(),
    )
    return f"{IMAGE_PREFIX}task-{component.strip('._-') or 'unnamed'}"


@dataclass
class ImageStats:
    """What an :class:`ImageManager` did, for tests and reports."""

    builds: int = 0
    """Docker builds started (task images and substitutes; not the debootstrap base)."""
    cache_hits: int = 0
    """Task image requests answered by an existing tag."""
    pulls_failed: int = 0
    """Pull attempts that failed (each image is tried at most once per few minutes)."""
    substitutions: list[tuple[str, str]] = field(default_factory=list)
    """(public image, local substitute) pairs used, each once, in order (each is logged once as a warning)."""
    substitution_notes: dict[str, str] = field(default_factory=dict)
    """Public image -> what differs in its substitute (a python image: which CPython stands in for which)."""
    prebuilt_used: int = 0
    """Task image requests answered by the task's own ``docker_image`` (present here or pulled)."""
    prebuilt_fallbacks: int = 0
    """Tasks whose ``docker_image`` could not be had, so their Dockerfile was built (or found cached) instead."""


@dataclass(frozen=True)
class ManagedImage:
    """One of our images, as ``images list`` shows it."""

    tag: str
    id: str
    size_bytes: int
    created: str
    task_id: str | None


class ImageManager:
    """Resolves, builds and caches images through the Docker Engine API (the ``docker`` SDK).

    Builds run with :data:`BUILD_NETWORK_MODE` and a wall-clock deadline: a task's
    ``limits.build_timeout_s``, ``build_timeout_s`` for the substitutes of the alias table. At the
    deadline the build's connection is shut, which makes the daemon cancel it, and
    :class:`ImageBuildError` says so.
    """

    def __init__(
        self,
        client: docker.DockerClient | None = None,
        base_image: str = BASE_IMAGE,
        cache_dir: Path | str | None = None,
        pull_timeout_s: float = 20.0,
        build_timeout_s: float = 3600.0,
        host_settings: HostBuildSettings | None = None,
        ca: str | HostTrust | None = None,
    ):
        self._client = client
        self.host_settings = host_settings
        """Opt-in host proxy / CA bundle / pip index settings for builds (see sandbox/images/host_build_settings.py)."""
        self.host_trust = ca if isinstance(ca, HostTrust) else resolve_host_trust(ca)
        """Opt-in extra CAs and proxy variables installed as a first layer under every task image
        (``ca``: ``auto``, ``none``, a PEM path or a :class:`HostTrust`; None: ``$TERMINAL_AGENT_CA_BUNDLE``;
        see sandbox/images/host_trust.py). None when there is nothing to install."""
        self.base_image = base_image
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.pull_timeout_s = pull_timeout_s
        """Socket timeout of one pull: a registry that does not answer fails the pull this fast."""
        self.build_timeout_s = build_timeout_s
        """Deadline of a build that is not a task's (the substitutes of the alias table)."""
        self.stats = ImageStats()
        self._stats_lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._unpullable: dict[str, tuple[float, str]] = {}

    # --- plumbing -----------------------------------------------------------------------------
    @property
    def client(self) -> docker.DockerClient:
        """The Docker client given, else the process's shared one (raises ``DockerNotAvailableError``)."""
        if self._client is None:
            from terminal_agent.sandbox.docker_connection import docker_client

            self._client = docker_client()
        return self._client

    @property
    def build_count(self) -> int:
        """Docker builds this manager started."""
        return self.stats.builds

    @contextlib.contextmanager
    def _locked(self, key: str, across_processes: bool = True) -> Iterator[None]:
        with self._locks_guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if not across_processes:
                yield
                return
            lock_dir = self.cache_dir / "locks"
            lock_dir.mkdir(parents=True, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)
            with open(lock_dir / f"{safe}.lock", "w") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)

    def _image_id(self, name: str) -> str | None:
        try:
            return str(self.client.images.get(name).id)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.APIError as exc:
            raise ImageError(f"cannot inspect image {name!r}: {exc}") from exc

    # --- base image and substitutes ---------------------------------------------------------------
    def ensure_base_image(self, rebuild: bool = False, mirror: str | None = None, tag: str | None = None) -> str:
        """Id of the debootstrap base image ``tag`` (default: this manager's base), built only when absent or asked."""
        tag = tag or self.base_image
        with self._locked(tag):
            image_id = None if rebuild else self._image_id(tag)
            if image_id:
                return image_id
            return build_base_image(self.client, tag=tag, mirror=mirror, work_dir=self.cache_dir / "rootfs")

    def _ensure_substitute(self, name: str) -> str:
        """Id of a local substitute: the base itself, one built from it, or one made by debootstrap from another
        Debian release (each rebuilt when its recipe or the base change). A build that fails on a package Debian
        does not have raises :class:`ImageError` naming it."""
        if name in (BASE_IMAGE, self.base_image):
            return self.ensure_base_image()
        if name in SUBSTITUTE_DEBOOTSTRAPS:
            recipe = SUBSTITUTE_DEBOOTSTRAPS[name]
            recipe_hash = content_hash(f"debootstrap {recipe.suite} {' '.join(recipe.packages)}\n"
                                       + "\n".join(recipe.changes), {}, [])
            with self._locked(name):
                existing = self._substitute_id(name, recipe_hash)
                if existing:
                    return existing
                with self._stats_lock:
                    self.stats.builds += 1
                return build_debootstrap_image(self.client, name, recipe.suite, recipe.packages,
                                               recipe.changes + (f"LABEL {HASH_LABEL}={recipe_hash}",),
                                               work_dir=self.cache_dir / "rootfs")
        if name not in SUBSTITUTE_DOCKERFILES:
            raise ImageNotAvailableError(f"the alias table names {name!r}, which has no recipe")
        base_id = self.ensure_base_image()
        dockerfile = SUBSTITUTE_DOCKERFILES[name].format(base=self.base_image)
        recipe_hash = content_hash(dockerfile, {}, [base_id])
        with self._locked(name):
            existing = self._substitute_id(name, recipe_hash)
            if existing:
                return existing
            try:
                return self._build(name, dockerfile, {}, {HASH_LABEL: recipe_hash}, progress=None)
            except ImageBuildError as exc:
                missing = missing_debian_packages(exc.log_tail)
                if not missing:
                    raise
                raise ImageBuildError(f"building the stand-in {name} failed: the base image's Debian release has no "
                                      f"package {', '.join(missing)} ({exc})", exc.log_tail) from None

    def _substitute_id(self, name: str, recipe_hash: str) -> str | None:
        """Id of the substitute ``name`` when it exists and was made from the recipe of ``recipe_hash``."""
        try:
            image = self.client.images.get(name)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.APIError as exc:
            raise ImageError(f"cannot inspect image {name!r}: {exc}") from exc
        return str(image.id) if image.labels.get(HASH_LABEL) == recipe_hash else None

    # --- resolving FROM images --------------------------------------------------------------------
    def _try_pull(self, reference: str) -> str | None:
        """Pull ``reference``; ``None`` (and a remembered reason) when the registry cannot give it."""
        failed = self._unpullable.get(reference)
        if failed and time.monotonic() - failed[0] < _UNPULLABLE_TTL_S:
            return None
        api = self.client.api
        repository, tag = split_image_reference(reference)
        started = time.monotonic()
        try:
            # APIClient.pull has no timeout of its own; the same Engine API call with a short
            # socket timeout makes a registry that never answers fail fast.
            response = api.post(
                api._url("/images/create"),  # type: ignore[attr-defined]  # docker-py's private helper, not in its stubs
                params={"fromImage": repository, "tag": tag},
                stream=True,
                timeout=self.pull_timeout_s,
            )
            api._raise_for_status(response)  # type: ignore[attr-defined]  # docker-py's private helper, not in its stubs
            for event in api._stream_helper(response, decode=True):  # type: ignore[attr-defined]  # as above
                if "error" in event:
                    raise docker.errors.APIError(event["error"])
            image_id = self._image_id(reference)
            if image_id:
                return image_id
            reason = "pull reported success but the image is absent"
        except Exception as exc:  # noqa: BLE001 - timeouts, DNS, auth, API errors all mean "not pullable"
            text = getattr(exc, "explanation", None) or str(exc)
            reason = text.splitlines()[0][:300] if text else type(exc).__name__
        logger.info("pull of %s failed after %.2f s: %s", reference, time.monotonic() - started, reason)
        self._unpullable[reference] = (time.monotonic(), reason)
        with self._stats_lock:
            self.stats.pulls_failed += 1
        return None

    def resolve_image(self, reference: str) -> tuple[str, str]:
        """(name to build from, its image id): present locally, else pulled, else a local alias.

        Raises :class:`ImageNotAvailableError` naming the image when none of the three works.
        """
        with self._locked("resolve:" + reference, across_processes=False):
            image_id = self._image_id(reference)
            if image_id:
                return reference, image_id
            image_id = self._try_pull(reference)
            if image_id:
                return reference, image_id
            alias = find_alias(reference)
            if alias is None:
                reason = self._unpullable.get(reference, (0.0, "unknown"))[1]
                raise ImageNotAvailableError(
                    f"image {reference!r} is not on this machine, cannot be pulled ({reason}) and has no local "
                    f"alias. Build or load it locally (docker build -t {reference} ... / docker load), or change "
                    f"the task's FROM to an image that is aliased ({ALIASED_IMAGES_HELP})"
                )
            substitute = self.base_image if alias.substitute == BASE_IMAGE else alias.substitute
            substitute_id = self._ensure_substitute(substitute)
        with self._stats_lock:
            first_time = (reference, substitute) not in self.stats.substitutions
            if first_time:
                self.stats.substitutions.append((reference, substitute))
                if alias.note:
                    self.stats.substitution_notes[reference] = alias.note
        if first_time:
            logger.warning("image %s is not available; substituting local image %s%s", reference, substitute,
                           f" ({alias.note})" if alias.note else "")
        return substitute, substitute_id

    def substitution_lines(self, dockerfile: str) -> list[str]:
        """One line per ``FROM`` image of ``dockerfile`` that this manager substituted (with what stands in for what),
        for a build log."""
        lines = []
        for reference in dict.fromkeys(entry.image for entry in find_from_images(dockerfile)):
            for public, substitute in list(self.stats.substitutions):
                if public == reference:
                    note = self.stats.substitution_notes.get(reference)
                    lines.append(f"terminal-agent: {reference} stands in as {substitute}" + (f": {note}" if note else ""))
        return lines

    def prepare_dockerfile(self, dockerfile: str) -> tuple[str, list[str]]:
        """(Dockerfile with every ``FROM`` resolved, the resolved images' ids in order)."""
        ids: list[str] = []

        def resolve(reference: str) -> str:
            name, image_id = self.resolve_image(reference)
            if self.host_trust is not None:
                name, image_id = self._with_host_trust(name, image_id)
            ids.append(image_id)
            return name

        return rewrite_from_lines(dockerfile, resolve), ids

    def _with_host_trust(self, name: str, image_id: str) -> tuple[str, str]:
        """(tag, id) of the image ``name`` with the host's CAs and proxy variables installed (built once per
        base image and setting; ``host_trust.HostTrust.layer``)."""
        trust = self.host_trust
        assert trust is not None
        tag = derived_base_tag(image_id, trust)
        with self._locked(tag):
            existing = self._image_id(tag)
            if existing:
                return tag, existing
            dockerfile, files = trust.layer(name)
            logger.info("installing the host's CAs and proxy variables over %s as %s (%s)", name, tag, trust.describe())
            labels = {HASH_LABEL: tag.rsplit(":", 1)[1], HOST_TRUST_LABEL: trust.fingerprint()[:16]}
            return tag, self._build(tag, dockerfile, files, labels, progress=None, what=f"the host CA layer over {name}")

    # --- task images ------------------------------------------------------------------------------
    def task_image_tag(self, task: Task) -> tuple[str, str]:
        """(tag, rewritten Dockerfile) of ``task``'s image; resolves (and may substitute) its bases."""
        dockerfile, base_ids = self.prepare_dockerfile(task.dockerfile)
        task_hash = content_hash(dockerfile, task.files, base_ids, self.host_trust)
        return f"{task_repository(task.task_id)}:{task_hash[:12]}", dockerfile

    def ensure_task_image(self, task: Task, progress: Progress | None = None) -> str:
        """The image of ``task``: its ``docker_image`` when that is present here or can be pulled (fast:
        one attempt with ``pull_timeout_s``, failures remembered), else the tag of its Dockerfile's image,
        built now if no image has that content hash yet.

        Raises :class:`ImageNotAvailableError` (a base image cannot be had; for a task with a
        ``docker_image`` the message says what was tried), or :class:`ImageBuildError` (the build failed
        or passed ``limits.build_timeout_s``; ``log_tail`` holds its last lines).
        """
        prebuilt_failure = None
        if task.docker_image:
            prebuilt_failure = self._prebuilt_failure(task.docker_image)
            if prebuilt_failure is None:
                with self._stats_lock:
                    self.stats.prebuilt_used += 1
                logger.debug("task %s: using its docker_image %s", task.task_id, task.docker_image)
                if self.host_trust is not None:
                    return self._with_host_trust(task.docker_image, self._image_id(task.docker_image) or "")[0]
                return task.docker_image
            with self._stats_lock:
                self.stats.prebuilt_fallbacks += 1
            logger.info("task %s: docker_image %s is not available (%s); building its Dockerfile",
                        task.task_id, task.docker_image, prebuilt_failure)
        try:
            tag, dockerfile = self.task_image_tag(task)
        except ImageNotAvailableError as exc:
            if prebuilt_failure is None:
                raise
            raise ImageNotAvailableError(
                f"task {task.task_id!r}: neither its docker_image nor its Dockerfile gives an image. Tried: "
                f"docker_image {task.docker_image!r} (not on this machine, pull failed: {prebuilt_failure}); "
                f"then building the Dockerfile: {exc}"
            ) from None
        with self._locked(tag):
            if self._image_id(tag):
                with self._stats_lock:
                    self.stats.cache_hits += 1
                logger.debug("task %s: image %s is cached", task.task_id, tag)
                return tag
            self._build(tag, dockerfile, task.files, {TASK_LABEL: task.task_id}, progress, what=f"task {task.task_id}",
                        deadline_s=task.limits.build_timeout_s, preamble=self.substitution_lines(task.dockerfile))
        return tag

    def _prebuilt_failure(self, reference: str) -> str | None:
        """None when the image ``reference`` is present here or was pulled now; otherwise why not."""
        with self._locked("resolve:" + reference, across_processes=False):
            if self._image_id(reference) or self._try_pull(reference):
                return None
        return self._unpullable.get(reference, (0.0, "the pull failed"))[1]

    def _build(
        self,
        tag: str,
        dockerfile: str,
        files: dict[str, FileContent],
        labels: dict[str, str],
        progress: Progress | None,
        what: str | None = None,
        deadline_s: float | None = None,
        preamble: list[str] | None = None,
    ) -> str:
        """``docker build`` of ``dockerfile`` with ``files`` as its context, within ``deadline_s`` seconds
        (default: ``build_timeout_s``); returns the image id. ``preamble``: lines that open the build log (which
        image stands in for which)."""
        what = what or tag
        deadline_s = float(deadline_s or self.build_timeout_s)
        with self._stats_lock:
            self.stats.builds += 1
        tail: collections.deque[str] = collections.deque(maxlen=LOG_TAIL_LINES)
        for line in preamble or []:
            tail.append(line)
            if progress:
                progress(line)
        started = time.monotonic()
        logger.info("building %s (%s)", tag, what)
        settings = self.host_settings
        if settings is not None and settings.needs_secrets:
            build_with_secrets(settings, tag, dockerfile, files, labels, what, deadline_s)
        else:
            build_with_engine_api(self.client.api, tag, dockerfile, files, labels, progress, what, tail, deadline_s,
                                  self._build_args(), enable_hint=self.host_settings is None and self.host_trust is None)
        image_id = self._image_id(tag)
        if image_id is None:
            raise ImageBuildError(f"building the image of {what} ended without an image tagged {tag}", "\n".join(tail))
        logger.info("built %s in %.1f s", tag, time.monotonic() - started)
        return image_id

    def _build_args(self) -> dict[str, str]:
        """Proxy build args: the host's (with ``ca`` set; values with credentials reach builds only this way)
        and those of ``host_settings``. Docker keeps these predefined args out of the image's history."""
        args = dict(self.host_trust.proxies) if self.host_trust else {}
        if self.host_settings:
            args.update(self.host_settings.build_args())
        return args

    # --- listing ----------------------------------------------------------------------------------
    def list_images(self) -> list[ManagedImage]:
        """Our images: labelled ``terminal-agent.managed=true`` or tagged ``terminal-agent/...``."""
        found: dict[str, ManagedImage] = {}
        for image in self.client.images.list():
            ours = image.labels.get(MANAGED_LABEL) == "true" if image.labels else False
            for tag in image.tags or []:
                if ours or tag.startswith(IMAGE_PREFIX):
                    found[tag] = ManagedImage(
                        tag=tag,
                        id=image.short_id,
                        size_bytes=int(image.attrs.get("Size") or 0),
                        created=str(image.attrs.get("Created", ""))[:19],
                        task_id=(image.labels or {}).get(TASK_LABEL),
                    )
        return sorted(found.values(), key=lambda item: item.tag)


# --- module-level convenience ------------------------------------------------------------------
_default_managers: dict[str, ImageManager] = {}
_default_lock = threading.Lock()


def default_manager(ca: str | None = None) -> ImageManager:
    """The process-wide :class:`ImageManager` of the ``ca`` setting (None: ``$TERMINAL_AGENT_CA_BUNDLE``, else
    none; see ``host_trust``), with the default Docker client and cache."""
    setting = ca_setting(ca)
    with _default_lock:
        if setting not in _default_managers:
            _default_managers[setting] = ImageManager(ca=setting)
        return _default_managers[setting]


def ensure_base_image(rebuild: bool = False) -> str:
    """Id of the offline base image, built by debootstrap only when absent or when ``rebuild``."""
    return default_manager().ensure_base_image(rebuild=rebuild)


def ensure_task_image(task: Task, progress: Progress | None = None, *, ca: str | None = None) -> str:
    """Tag of ``task``'s image (see :meth:`ImageManager.ensure_task_image`), with the host CA layer of the
    ``ca`` setting (None: ``$TERMINAL_AGENT_CA_BUNDLE``, else none)."""
    return default_manager(ca).ensure_task_image(task, progress=progress)
