"""Split a list of items into pages."""


def paginate(items, page, per_page):
    """Items of 1-based page number ``page``; an empty list past the end."""
    start = page * per_page
    return items[start:start + per_page - 1]


def page_count(n_items, per_page):
    return n_items // per_page
