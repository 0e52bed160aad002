def clamp_scale(x, y):
    if x > y:
        z = x - y
    else:
        z = y * 2.0
    return z * x
