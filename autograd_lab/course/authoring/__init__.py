"""What the instructor runs on the key: ``autograd-lab release`` (solutions -> course), and the
notebook helpers every course tool uses (:mod:`.notebooks`, nbformat only).
"""
