"""geodist LAT1 LON1 LAT2 LON2 [--miles]: print the great-circle distance, one decimal."""

import argparse

from geocore import haversine, km_to_miles


def main(argv=None):
    parser = argparse.ArgumentParser(prog="geodist")
    for name in ("lat1", "lon1", "lat2", "lon2"):
        parser.add_argument(name, type=float)
    parser.add_argument("--miles", action="store_true")
    args = parser.parse_args(argv)
    km = haversine(args.lat1, args.lon1, args.lat2, args.lon2)
    if args.miles:
        print(f"{km_to_miles(km):.1f} mi")
    else:
        print(f"{km:.1f} km")
    return 0
