KM_PER_MILE = 1.609344


def km_to_miles(km):
    return km / KM_PER_MILE
