from app.format import title_case


def greet(name):
    return "Hello, " + title_case(name) + "!"
