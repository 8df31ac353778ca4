def title_case(text):
    return " ".join(part[:1].upper() + part[1:] for part in text.split(" "))
