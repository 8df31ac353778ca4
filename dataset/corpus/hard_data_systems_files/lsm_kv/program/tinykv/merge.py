"""K-way merge of sorted entry streams, newest version of each key first."""

import heapq


def merge_newest(streams):
    """Merge iterables of (key, seq, value), each sorted by key, into one stream with one entry per key.

    When several streams hold the same key the entry with the highest sequence number wins, whatever the order
    of the streams.
    """
    heap = []
    iterators = [iter(stream) for stream in streams]
    for number, iterator in enumerate(iterators):
        for key, seq, value in iterator:
            heap.append((key, -seq, number, value))
            break
    heapq.heapify(heap)
    last_key = None
    while heap:
        key, negative_seq, number, value = heapq.heappop(heap)
        for next_key, next_seq, next_value in iterators[number]:
            heapq.heappush(heap, (next_key, -next_seq, number, next_value))
            break
        if key == last_key:
            continue
        last_key = key
        yield key, -negative_seq, value


def live_items(entries):
    """(key, value) of the entries that are not tombstones."""
    from .codec import is_tombstone

    for key, _, value in entries:
        if not is_tombstone(value):
            yield key, value
