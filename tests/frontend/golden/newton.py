def newton(a):
    x = a
    k = 0
    while k < 20:
        x = 0.5 * (x + a / x)
        k += 1
        if abs(x * x - a) < 1e-12:
            break
    return x
