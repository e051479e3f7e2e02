# SPDX-License-Identifier: Apache-2.0
# Drawn by blume_bench --fpr-plot from fpr.dat: one panel per kind, measured points on the model's curve.
set terminal svg size 1500,1300 font 'sans,10' background '#ffffff'
set output 'fpr.svg'
set multiplot layout 5,5 title 'False-positive rate against bits per key, 1000000 keys: measured (dots), as the built filter predicts it (circles), as the planner does (line)'
set logscale y
set format y '10^{%L}'
set yrange [1e-6:0.6]
set autoscale x
set offsets graph 0.05, graph 0.05, 0, 0
set xlabel 'bits per key'
set key off
set grid
set autoscale x
set title 'bloom'
plot 'fpr.dat' index 1 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 0 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 0 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'partitioned'
plot 'fpr.dat' index 3 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 2 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 2 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'blocked'
plot 'fpr.dat' index 5 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 4 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 4 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'split-block'
plot 'fpr.dat' index 7 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 6 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 6 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'counting'
plot 'fpr.dat' index 9 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 8 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 8 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'cuckoo'
plot 'fpr.dat' index 11 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 10 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 10 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'quotient'
plot 'fpr.dat' index 13 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 12 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 12 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'scalable'
plot 'fpr.dat' index 15 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 14 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 14 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'stable'
plot 'fpr.dat' index 17 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 16 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 16 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'aging'
plot 'fpr.dat' index 19 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 18 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 18 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set xrange [4.84097:14.841]
set title 'xor8'
plot 'fpr.dat' index 21 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 20 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 20 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set xrange [14.6812:24.6812]
set title 'xor16'
plot 'fpr.dat' index 23 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 22 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 22 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set xrange [4.04474:14.0447]
set title 'fuse8'
plot 'fpr.dat' index 25 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 24 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 24 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set xrange [13.0887:23.0887]
set title 'fuse16'
plot 'fpr.dat' index 27 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 26 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 26 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'spatial'
plot 'fpr.dat' index 29 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 28 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 28 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'layered'
plot 'fpr.dat' index 31 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 30 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 30 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'attenuated'
plot 'fpr.dat' index 33 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 32 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 32 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'compact'
plot 'fpr.dat' index 35 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 34 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 34 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'vi-counting'
plot 'fpr.dat' index 37 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 36 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 36 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'iblt'
plot 'fpr.dat' index 39 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 38 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 38 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
set autoscale x
set title 'dleft'
plot 'fpr.dat' index 41 using 1:2 with lines lw 2 lc rgb '#4477aa', '' index 40 using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index 40 using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'
unset multiplot
