"""The code generator: a :class:`~stencil.nodes.TemplateNode` to the source of a Python module.

The module defines ``root(rt, ctx, blocks, out)`` (the whole template), one ``block_NAME(rt, ctx, blocks, out,
level)`` per block, ``prelude(rt, ctx)`` (the top-level ``set`` and ``import`` tags, run for a template that
extends another), ``parent_name(rt, ctx)`` (what it extends, or None), ``BLOCKS`` and ``MACROS``. Text is
appended to ``out``; ``rt`` is :mod:`stencil.runtime`. Loop variables, ``set`` inside loops and macro
parameters are Python locals (``l_NAME``); every other name is looked up in the context at run time.
"""

from stencil import nodes

PYTHON_OPERATORS = {"==", "!=", "<", "<=", ">", ">=", "in", "not in", "and", "or"}


class CodeWriter:
    def __init__(self):
        self.lines = []
        self.indent = 0

    def line(self, text):
        self.lines.append("    " * self.indent + text)

    def source(self):
        return "\n".join(self.lines) + "\n"


class Compiler:
    def __init__(self, template, name):
        self.template = template
        self.name = name or "<string>"
        self.writer = CodeWriter()
        self.scopes = [set()]
        self.counter = 0
        self.current_block = None
        self.macro_names = {macro.name for macro in template.macros}

    # -- helpers -----------------------------------------------------------------------------------
    def temp(self, stem):
        self.counter += 1
        return f"t_{stem}_{self.counter}"

    def is_local(self, name):
        return any(name in scope for scope in self.scopes)

    def line(self, text):
        self.writer.line(text)

    # -- module ------------------------------------------------------------------------------------
    def compile(self):
        self.line(f"# compiled from {self.name}")
        self.function("root", "rt, ctx, blocks, out", self.template.body)
        for block in self.template.blocks.values():
            self.current_block = block.name
            self.function(f"block_{block.name}", "rt, ctx, blocks, out, level", block.body)
            self.current_block = None
        prelude = [s for s in self.template.body if isinstance(s, (nodes.Set, nodes.Import))]
        self.function("prelude", "rt, ctx", prelude, collects_output=False)
        self.line("def parent_name(rt, ctx):")
        self.writer.indent += 1
        self.line("return None" if self.template.extends is None else f"return {self.expression(self.template.extends)}")
        self.writer.indent -= 1
        for macro in self.template.macros:
            self.macro(macro)
        self.line("BLOCKS = {" + ", ".join(f"{name!r}: block_{name}" for name in self.template.blocks) + "}")
        self.line("MACROS = {" + ", ".join(
            f"{m.name!r}: (macro_{m.name}, {m.params!r}, defaults_{m.name})" for m in self.template.macros) + "}")
        return self.writer.source()

    def function(self, name, signature, body, collects_output=True):
        self.line(f"def {name}({signature}):")
        self.writer.indent += 1
        if not collects_output:
            self.line("out = []")
        self.line("pass")
        self.statements(body)
        self.writer.indent -= 1

    def macro(self, macro):
        params = ", ".join(f"l_{param}" for param in macro.params)
        self.line(f"def macro_{macro.name}(rt, ctx, out{', ' if params else ''}{params}):")
        self.writer.indent += 1
        self.line("pass")
        self.scopes.append(set(macro.params))
        self.statements(macro.body)
        self.scopes.pop()
        self.writer.indent -= 1
        self.line(f"def defaults_{macro.name}(rt, ctx):")
        self.writer.indent += 1
        self.line("return {" + ", ".join(f"{name!r}: {self.expression(value)}" for name, value in macro.defaults) + "}")
        self.writer.indent -= 1

    # -- statements --------------------------------------------------------------------------------
    def statements(self, body):
        for statement in body:
            getattr(self, "visit_" + type(statement).__name__)(statement)

    def visit_Text(self, node):
        self.line(f"out.append({node.text!r})")

    def visit_Output(self, node):
        self.line(f"out.append(rt.output(ctx, {self.expression(node.expression)}))")

    def visit_If(self, node):
        for index, (condition, body) in enumerate(node.tests):
            keyword = "if" if index == 0 else "elif"
            self.line(f"{keyword} rt.truthy({self.expression(condition)}):")
            self.writer.indent += 1
            self.line("pass")
            self.statements(body)
            self.writer.indent -= 1
        if node.otherwise:
            self.line("else:")
            self.writer.indent += 1
            self.statements(node.otherwise)
            self.writer.indent -= 1

    def visit_For(self, node):
        items = self.temp("items")
        index = self.temp("index")
        item = self.temp("item")
        self.line(f"{items} = rt.iterate({self.expression(node.iterable)}, {node.line})")
        self.line(f"if {items}:")
        self.writer.indent += 1
        self.line(f"for {index}, {item} in enumerate({items}):")
        self.writer.indent += 1
        self.scopes.append(set(node.targets) | {"loop"})
        self.line(f"l_loop = rt.LoopState({index}, len({items}))")
        if len(node.targets) == 1:
            self.line(f"l_{node.targets[0]} = {item}")
        else:
            names = ", ".join(f"l_{target}" for target in node.targets)
            self.line(f"{names} = rt.unpack({item}, {len(node.targets)}, {node.line})")
        self.statements(node.body)
        self.scopes.pop()
        self.writer.indent -= 2
        if node.otherwise:
            self.line("else:")
            self.writer.indent += 1
            self.statements(node.otherwise)
            self.writer.indent -= 1

    def visit_Set(self, node):
        value = self.expression(node.expression)
        if self.is_local(node.name):
            self.line(f"l_{node.name} = {value}")
        else:
            self.line(f"ctx.set({node.name!r}, {value})")

    def visit_Block(self, node):
        self.line(f"blocks[{node.name!r}][0](rt, ctx, blocks, out, 0)")

    def visit_Include(self, node):
        self.line(f"rt.include(ctx, {self.expression(node.template)}, out, {node.line})")

    def visit_Import(self, node):
        self.line(f"ctx.set({node.alias!r}, rt.import_template(ctx, {self.expression(node.template)}, {node.line}))")

    # -- expressions -------------------------------------------------------------------------------
    def expression(self, node):
        return getattr(self, "expr_" + type(node).__name__)(node)

    def expr_Const(self, node):
        return repr(node.value)

    def expr_Name(self, node):
        if self.is_local(node.name):
            return f"l_{node.name}"
        if node.name == "super" and self.current_block is not None:
            return f"rt.SuperBlock(rt, ctx, blocks, {self.current_block!r}, level)"
        if node.name in self.macro_names:
            return f"rt.bound_macro(ctx, MACROS, {node.name!r})"
        return f"ctx.resolve({node.name!r})"

    def expr_ListExpr(self, node):
        return "[" + ", ".join(self.expression(item) for item in node.items) + "]"

    def expr_Attribute(self, node):
        return f"rt.attribute({self.expression(node.target)}, {node.name!r})"

    def expr_Item(self, node):
        return f"rt.item({self.expression(node.target)}, {self.expression(node.key)})"

    def expr_Call(self, node):
        args = "[" + ", ".join(self.expression(arg) for arg in node.args) + "]"
        kwargs = "{" + ", ".join(f"{name!r}: {self.expression(value)}" for name, value in node.kwargs) + "}"
        return f"rt.call({self.expression(node.function)}, {args}, {kwargs})"

    def expr_Filter(self, node):
        args = "[" + ", ".join(self.expression(arg) for arg in node.args) + "]"
        return f"rt.apply_filter(ctx, {node.name!r}, {self.expression(node.value)}, {args}, {node.line})"

    def expr_BinOp(self, node):
        left, right = self.expression(node.left), self.expression(node.right)
        if node.operator in ("and", "or"):
            return f"rt.logical({node.operator!r}, lambda: {left}, lambda: {right})"
        if node.operator in PYTHON_OPERATORS:
            return f"rt.compare({node.operator!r}, {left}, {right})"
        return f"rt.arithmetic({node.operator!r}, {left}, {right})"

    def expr_UnaryOp(self, node):
        operand = self.expression(node.operand)
        if node.operator == "not":
            return f"(not rt.truthy({operand}))"
        return f"rt.arithmetic('-', 0, {operand})"

    def expr_Conditional(self, node):
        return (f"({self.expression(node.then)} if rt.truthy({self.expression(node.condition)}) "
                f"else {self.expression(node.otherwise)})")


def compile_template(template, name=None):
    """The Python source of the module that renders ``template``."""
    return Compiler(template, name).compile()
