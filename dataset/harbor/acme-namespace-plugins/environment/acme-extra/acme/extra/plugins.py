def upper(text):
    return text.upper()


def reverse(text):
    return text[::-1]
