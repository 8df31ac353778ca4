def whisper(text):
    return text.lower()


# end
