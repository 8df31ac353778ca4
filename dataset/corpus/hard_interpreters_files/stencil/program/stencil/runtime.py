"""What compiled templates call at render time: the context, escaping, lookups, loops, calls, macros."""

import sys

from stencil.errors import TemplateRuntimeError


class Markup(str):
    """A string that is already safe HTML: autoescaping leaves it alone."""

    def __add__(self, other):
        return Markup(str.__add__(self, escape(other)))

    def __html__(self):
        return self


def escape(value):
    """``value`` as HTML-safe Markup (a Markup value is returned unchanged)."""
    if isinstance(value, Markup) or hasattr(value, "__html__"):
        return Markup(value)
    text = to_text(value)
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                  .replace('"', "&#34;").replace("'", "&#39;"))


class Undefined:
    """A missing name or attribute: prints as nothing, is false, iterates as empty, and stays undefined."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return ""

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __eq__(self, other):
        return isinstance(other, Undefined)

    def __hash__(self):
        return 0

    def __repr__(self):
        return f"Undefined({self.name!r})"


def to_text(value):
    if value is None or isinstance(value, Undefined):
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return str(value)


class Context:
    """The variables of one render: the caller's, then the environment's globals."""

    def __init__(self, environment, variables, autoescape, name=None):
        self.environment = environment
        self.vars = dict(variables)
        self.autoescape = autoescape
        self.name = name

    def resolve(self, name):
        if name in self.vars:
            return self.vars[name]
        if name in self.environment.globals:
            return self.environment.globals[name]
        return Undefined(name)

    def set(self, name, value):
        self.vars[name] = value

    def error(self, message, line=None):
        return TemplateRuntimeError(message, self.name, line)


# -- output ----------------------------------------------------------------------------------------
def output(ctx, value):
    if ctx.autoescape:
        return escape(value)
    return to_text(value)


def truthy(value):
    return bool(value)


def logical(operator, left, right):
    value = left()
    if operator == "and":
        return right() if truthy(value) else value
    return value if truthy(value) else right()


def compare(operator, left, right):
    try:
        if operator == "==":
            return left == right
        if operator == "!=":
            return left != right
        if operator == "in":
            return left in right
        if operator == "not in":
            return left not in right
        if isinstance(left, Undefined) or isinstance(right, Undefined):
            return False
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[operator] \
            if operator in ("<", "<=", ">", ">=") else None
    except TypeError:
        raise TemplateRuntimeError(f"cannot compare {type(left).__name__} {operator} {type(right).__name__}") from None


def arithmetic(operator, left, right):
    if operator == "~":
        return to_text(left) + to_text(right)
    if isinstance(left, Undefined) or isinstance(right, Undefined):
        raise TemplateRuntimeError(f"undefined value in arithmetic ({operator})")
    try:
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "*":
            return left * right
        if operator == "/":
            return left / right
        if operator == "//":
            return left // right
        if operator == "%":
            return left % right
    except ZeroDivisionError:
        raise TemplateRuntimeError("division by zero") from None
    except TypeError:
        raise TemplateRuntimeError(
            f"unsupported operands for {operator}: {type(left).__name__} and {type(right).__name__}") from None
    raise TemplateRuntimeError(f"unknown operator {operator}")


# -- lookups ---------------------------------------------------------------------------------------
def attribute(target, name):
    """``target.name``: a dict key first, then an attribute (never a private one)."""
    if isinstance(target, dict):
        return target[name] if name in target else Undefined(name)
    if isinstance(target, Undefined) or name.startswith("_"):
        return Undefined(name)
    return getattr(target, name, Undefined(name))


def item(target, key):
    """``target[key]``: an index or a key; missing gives undefined."""
    if isinstance(target, Undefined):
        return Undefined(str(key))
    try:
        return target[key]
    except (KeyError, IndexError, TypeError):
        if isinstance(key, str):
            return attribute(target, key)
        return Undefined(str(key))


def call(function, args, kwargs):
    if isinstance(function, Undefined):
        raise TemplateRuntimeError(f"{function.name!r} is undefined and cannot be called")
    if not callable(function):
        raise TemplateRuntimeError(f"a {type(function).__name__} is not callable")
    return function(*args, **kwargs)


# -- loops -----------------------------------------------------------------------------------------
def iterate(value, line=None):
    if isinstance(value, Undefined) or value is None:
        return []
    if isinstance(value, dict):
        return list(value.items())
    try:
        return list(value)
    except TypeError:
        raise TemplateRuntimeError(f"cannot loop over a {type(value).__name__}", None, line) from None


def unpack(value, count, line=None):
    try:
        values = list(value)
    except TypeError:
        values = None
    if values is None or len(values) != count:
        raise TemplateRuntimeError(f"cannot unpack {value!r} into {count} loop variables", None, line)
    return values


class LoopState:
    """``loop`` inside a for: index (from 1), index0, first, last, length, revindex."""

    def __init__(self, index0, length):
        self.index0 = index0
        self.index = index0 + 1
        self.length = length
        self.first = index0 == 0
        self.last = index0 == length - 1
        self.revindex = length - index0

    def cycle(self, *values):
        return values[self.index0 % len(values)] if values else None


# -- filters, includes, inheritance ----------------------------------------------------------------
def apply_filter(ctx, name, value, args, line=None):
    function = ctx.environment.filters.get(name)
    if function is None:
        raise TemplateRuntimeError(f"unknown filter {name!r}", ctx.name, line)
    try:
        if getattr(function, "needs_context", False):
            return function(ctx, value, *args)
        return function(value, *args)
    except TemplateRuntimeError:
        raise
    except (TypeError, ValueError) as error:
        raise TemplateRuntimeError(f"filter {name!r}: {error}", ctx.name, line) from None


def include(ctx, name, out, line=None):
    template = ctx.environment.get_template(to_text(name))
    template.render_into(ctx, out)


class SuperBlock:
    """``super()`` inside a block: renders the same block of the parent template."""

    def __init__(self, rt, ctx, blocks, name, level):
        self.rt, self.ctx, self.blocks, self.name, self.level = rt, ctx, blocks, name, level

    def __call__(self):
        chain = self.blocks[self.name]
        if self.level + 1 >= len(chain):
            raise TemplateRuntimeError(f"block {self.name!r} has no parent block for super()")
        out = []
        chain[self.level + 1](self.rt, self.ctx, self.blocks, out, self.level + 1)
        text = "".join(out)
        return Markup(text) if self.ctx.autoescape else text


# -- macros ----------------------------------------------------------------------------------------
class Macro:
    """A ``{% macro %}`` bound to the context it runs in; calling it renders its body."""

    def __init__(self, ctx, name, function, params, defaults):
        self.ctx, self.name, self.function, self.params, self.defaults = ctx, name, function, params, defaults

    def __call__(self, *args, **kwargs):
        rt = _THIS_MODULE
        if len(args) > len(self.params):
            raise TemplateRuntimeError(f"macro {self.name!r} takes {len(self.params)} arguments, got {len(args)}")
        values = dict(zip(self.params, args))
        for key, value in kwargs.items():
            if key not in self.params:
                raise TemplateRuntimeError(f"macro {self.name!r} has no parameter {key!r}")
            if key in values:
                raise TemplateRuntimeError(f"macro {self.name!r} got {key!r} twice")
            values[key] = value
        missing = [param for param in self.params if param not in values]
        if missing:
            defaults = self.defaults(rt, self.ctx)
            for param in missing:
                values[param] = defaults[param] if param in defaults else Undefined(param)
        out = []
        self.function(rt, self.ctx, out, *(values[param] for param in self.params))
        text = "".join(out)
        return Markup(text) if self.ctx.autoescape else text

    def __repr__(self):
        return f"<macro {self.name}>"


def bound_macro(ctx, macros, name):
    function, params, defaults = macros[name]
    return Macro(ctx, name, function, params, defaults)


class Namespace:
    """What ``{% import "x" as ns %}`` binds: the macros of x as attributes."""

    def __init__(self, name, macros):
        self._name = name
        for macro_name, macro in macros.items():
            setattr(self, macro_name, macro)

    def __repr__(self):
        return f"<namespace {self._name}>"


def import_template(ctx, name, line=None):
    template = ctx.environment.get_template(to_text(name))
    fresh = Context(ctx.environment, {}, ctx.autoescape, template.name)
    template.module["prelude"](_THIS_MODULE, fresh)
    macros = {macro_name: bound_macro(fresh, template.module["MACROS"], macro_name)
              for macro_name in template.module["MACROS"]}
    return Namespace(template.name, macros)


_THIS_MODULE = sys.modules[__name__]
