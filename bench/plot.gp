# plot.gp - docs/performance-sweep.png from the data `make bench-plot` writes:
# ns per operation (one key at a time) against n, one line per peer, one
# panel per operation. Columns: n peer add_ns present_ns absent_ns bpk fpr.
# usage: gnuplot -e "data='sweep.dat'; out='sweep.png'" bench/plot.gp
if (!exists("data")) data = 'sweep.dat'
if (!exists("out")) out = 'performance-sweep.png'

set terminal pngcairo size 1500,520 font "sans,10"
set output out
set logscale x 10
set format x "10^{%L}"
set xlabel "keys added (n), p = 10^{-4}"
set ylabel "ns per operation"
set grid
set key bottom right font "sans,9"
set yrange [0:*]

peers = "libbloom standard-classic standard-blocked counting-classic counting-blocked scalable-classic scalable-blocked"
titles = "libbloom standard standard/blocked counting counting/blocked scalable scalable/blocked"

set multiplot layout 1,3 title "bloomkit against libbloom, one key at a time (make bench-plot)"
do for [op = 1:3] {
    if (op == 1) { set title "add" }
    if (op == 2) { set title "lookup, present keys" }
    if (op == 3) { set title "lookup, absent keys" }
    plot for [i = 1:words(peers)] sprintf("< awk '$2 == \"%s\"' '%s'", word(peers, i), data) \
        using 1:(column(2 + op)) with linespoints lw 2 pt i title word(titles, i)
}
unset multiplot
