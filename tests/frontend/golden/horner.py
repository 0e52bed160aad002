def horner(c, t):
    v = 0.0
    for i in range(len(c)):
        v = v * t + c[i]
    return v
