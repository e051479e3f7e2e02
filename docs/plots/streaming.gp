# SPDX-License-Identifier: Apache-2.0
# Drawn by blume_streaming_bench --plots from streaming.dat: FP + FN against n, beside the lower bound.
set terminal svg size 1000,480 font 'sans,11' background '#ffffff'
set output 'streaming.svg'
set multiplot layout 1,2 title 'FP + FN of the forgetting filters on a stream, against the lower bound for their state (m = 65536 bits)'
set logscale x
set xlabel 'n / m'
set ylabel 'FP + FN'
set yrange [0:1.05]
set grid
set key bottom right font ',9'
set title 'L = 2·m'
plot 'streaming.dat' index 0 using 1:4 with linespoints lw 2 pt 7 lc rgb '#4477aa' title 'stable', '' index 0 using 1:5 with lines dt 2 lc rgb '#4477aa' notitle, 'streaming.dat' index 1 using 1:4 with linespoints lw 2 pt 7 lc rgb '#cc3311' title 'aging', '' index 1 using 1:5 with lines dt 2 lc rgb '#cc3311' notitle, 'streaming.dat' index 2 using 1:4 with linespoints lw 2 pt 7 lc rgb '#228833' title 'novelty', '' index 2 using 1:5 with lines dt 2 lc rgb '#228833' notitle
set title 'L = 16·m'
plot 'streaming.dat' index 3 using 1:4 with linespoints lw 2 pt 7 lc rgb '#4477aa' title 'stable', '' index 3 using 1:5 with lines dt 2 lc rgb '#4477aa' notitle, 'streaming.dat' index 4 using 1:4 with linespoints lw 2 pt 7 lc rgb '#cc3311' title 'aging', '' index 4 using 1:5 with lines dt 2 lc rgb '#cc3311' notitle, 'streaming.dat' index 5 using 1:4 with linespoints lw 2 pt 7 lc rgb '#228833' title 'novelty', '' index 5 using 1:5 with lines dt 2 lc rgb '#228833' notitle
unset multiplot
