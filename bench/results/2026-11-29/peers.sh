#!/usr/bin/env bash
# Seed 001 from Python at main, every peer, alone on the machine (bench/peers.sh); an argument,
# if given, ends the names of the outputs (LOG_a, dbm_1m_a.txt, ...).
exec "$(dirname "$0")/../../peers.sh" bench/results/2026-11-29 "${1:-}"
