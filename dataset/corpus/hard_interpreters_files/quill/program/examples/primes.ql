fn is_prime(n) {
  if n < 2 { return false; }
  let d = 2;
  while d * d <= n {
    if n % d == 0 { return false; }
    d += 1;
  }
  return true;
}
print(join(filter(is_prime, range(2, 40)), ", "));
