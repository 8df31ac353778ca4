"""The environment: loading, compiling, caching and rendering templates, inheritance included.

Rendering a template that extends another walks up the chain (child, its parent, ... the base) and registers
every template's blocks on the way, the child's first: ``blocks[name]`` lists the implementations from the most
derived to the base, so ``{% block %}`` renders the most derived one and ``super()`` the next one up. The base
template's ``root`` then renders the page.
"""

from stencil import runtime
from stencil.compiler import compile_template
from stencil.errors import TemplateRuntimeError, TemplateSyntaxError
from stencil.filters import FILTERS
from stencil.parser import parse_template

MAX_INHERITANCE = 32


class Template:
    """A compiled template: ``module`` is the namespace of its generated code."""

    def __init__(self, environment, name, source):
        self.environment = environment
        self.name = name
        tree = parse_template(source, name)
        self.code = compile_template(tree, name)
        self.module = {}
        try:
            exec(compile(self.code, f"<template {name or 'string'}>", "exec"), self.module)
        except SyntaxError as error:
            raise TemplateSyntaxError(f"internal: generated code does not compile ({error.msg})", name) from None

    def render(self, *args, **kwargs):
        variables = dict(*args, **kwargs)
        ctx = runtime.Context(self.environment, variables, self.environment.autoescape, self.name)
        out = []
        try:
            self.render_into(ctx, out)
        except TemplateRuntimeError as error:
            if error.name is None:  # raised by the runtime, which does not know where it runs
                error.name = self.name or "<string>"
            raise
        return "".join(out)

    def render_into(self, ctx, out):
        blocks = {}
        current = self
        seen = [self.name]
        while True:
            for name, function in current.module["BLOCKS"].items():
                blocks.setdefault(name, []).append(function)
            parent = current.module["parent_name"](runtime, ctx)
            if parent is None:
                break
            current.module["prelude"](runtime, ctx)
            parent = runtime.to_text(parent)
            if parent in seen or len(seen) > MAX_INHERITANCE:
                raise TemplateRuntimeError(f"circular or too deep inheritance: {' -> '.join(seen + [parent])}", self.name)
            seen.append(parent)
            current = self.environment.get_template(parent)
        current.module["root"](runtime, ctx, blocks, out)


class Environment:
    def __init__(self, loader=None, autoescape=True, filters=None, globals=None):
        self.loader = loader
        self.autoescape = autoescape
        self.filters = dict(FILTERS)
        self.filters.update(filters or {})
        self.globals = {"range": range, "dict": dict}
        self.globals.update(globals or {})
        self.cache = {}

    def get_template(self, name):
        if self.loader is None:
            raise TemplateRuntimeError(f"no loader to load {name!r}")
        source, mtime = self.loader.load(name)
        cached = self.cache.get(name)
        if cached is not None and cached[0] == mtime and cached[1] == source:
            return cached[2]
        template = Template(self, name, source)
        self.cache[name] = (mtime, source, template)
        return template

    def from_string(self, source, name=None):
        return Template(self, name, source)
