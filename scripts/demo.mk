# `make demo`: the seed-000 scenario (scripts/demo.sh; N=... for another size).
demo:
	bash scripts/demo.sh
