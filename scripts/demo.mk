# `make demo`: the numbers load (scripts/demo.sh; N=... for another size).
demo:
	bash scripts/demo.sh
