# Count the words of a sentence, most frequent first.
let text = "the quick brown fox jumps over the lazy dog the end";
let counts = {};
for word in split(text) {
  if has(counts, word) { counts[word] += 1; } else { counts[word] = 1; }
}
let ordered = sort(keys(counts), fn(w) => -counts[w] * 100 + ord(w[0]) - 100);
for word in slice(ordered, 0, 3) {
  print(format("{}: {}", word, counts[word]));
}
