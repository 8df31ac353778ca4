"""Collect tags for each article."""


def add_tag(tag, tags=[]):
    tags.append(tag)
    return tags


def tags_for(article):
    result = None
    for word in article.split():
        if word.startswith("#"):
            result = add_tag(word[1:])
    return result or []
