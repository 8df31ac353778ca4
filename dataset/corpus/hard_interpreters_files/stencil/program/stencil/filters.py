"""The builtin filters (``{{ value | name(args) }}``). A filter marked ``needs_context`` gets the render context
first (to know whether autoescaping is on)."""

from stencil.errors import TemplateRuntimeError
from stencil.runtime import Markup, Undefined, escape, to_text

FILTERS = {}


def register(name, needs_context=False):
    def decorate(function):
        function.needs_context = needs_context
        FILTERS[name] = function
        return function
    return decorate


@register("upper")
def upper(value):
    return to_text(value).upper()


@register("lower")
def lower(value):
    return to_text(value).lower()


@register("title")
def title(value):
    return " ".join(word[:1].upper() + word[1:].lower() for word in to_text(value).split(" "))


@register("capitalize")
def capitalize(value):
    text = to_text(value)
    return text[:1].upper() + text[1:].lower()


@register("trim")
def trim(value):
    return to_text(value).strip()


@register("length")
@register("count")
def length(value):
    if isinstance(value, Undefined):
        return 0
    return len(value)


@register("default")
def default(value, fallback="", boolean=False):
    if isinstance(value, Undefined) or (boolean and not value):
        return fallback
    return value


@register("escape")
@register("e")
def escape_filter(value):
    return escape(value)


@register("safe")
def safe(value):
    return Markup(to_text(value))


@register("replace")
def replace(value, old, new):
    return to_text(value).replace(to_text(old), to_text(new))


@register("truncate")
def truncate(value, size=80, end="..."):
    text = to_text(value)
    if len(text) <= size:
        return text
    return text[:max(size - len(end), 0)].rstrip() + end


@register("join", needs_context=True)
def join(ctx, value, separator=""):
    items = list(value)
    if ctx.autoescape:
        return Markup(escape(separator).join(escape(item) for item in items))
    return to_text(separator).join(to_text(item) for item in items)


@register("first")
def first(value):
    for item in value:
        return item
    return Undefined("first")


@register("last")
def last(value):
    items = list(value)
    return items[-1] if items else Undefined("last")


@register("sort")
def sort(value, reverse=False, attribute=None):
    items = list(value)
    if attribute is None:
        return sorted(items, reverse=reverse)
    return sorted(items, key=lambda item: item[attribute] if isinstance(item, dict) else getattr(item, attribute),
                  reverse=reverse)


@register("reverse")
def reverse(value):
    if isinstance(value, str):
        return value[::-1]
    return list(reversed(list(value)))


@register("int")
def to_int(value, fallback=0):
    try:
        return int(float(to_text(value))) if not isinstance(value, bool) else int(value)
    except ValueError:
        return fallback


@register("float")
def to_float(value, fallback=0.0):
    try:
        return float(to_text(value))
    except ValueError:
        return fallback


@register("round")
def round_filter(value, digits=0):
    result = round(float(value), int(digits))
    return int(result) if digits == 0 else result


@register("abs")
def absolute(value):
    return abs(value)


@register("list")
def to_list(value):
    return list(value)


@register("string")
def string(value):
    return to_text(value)


@register("wordcount")
def wordcount(value):
    return len(to_text(value).split())


@register("center")
def center(value, width=80):
    return to_text(value).center(int(width))


@register("indent")
def indent(value, width=4, first=False):
    pad = " " * int(width)
    lines = to_text(value).split("\n")
    return "\n".join((pad + line if (index or first) and line else line) for index, line in enumerate(lines))


@register("batch")
def batch(value, size):
    items = list(value)
    if int(size) < 1:
        raise TemplateRuntimeError("batch size must be at least 1")
    return [items[i:i + int(size)] for i in range(0, len(items), int(size))]
