/* SPDX-License-Identifier: Apache-2.0 */
/* The R x C sliding-tile puzzle for SPIN: every board reachable from the solved one, the state space that
   explore.cpp searches with blume's visited sets. One process; each slide of the blank is one d_step, so the
   boards are the states (plus the one before the board is laid out). spin -DR=3 -DC=4 -a puzzle.pml */
#ifndef R
#define R 3
#endif
#ifndef C
#define C 3
#endif
#define N (R * C)
byte b[N];
byte z;  /* the blank's cell */

active proctype puzzle() {
  byte t;
  d_step { do :: t < N -> b[t] = t; t++ :: else -> break od; t = 0; z = 0 }
  do
  :: d_step { z % C > 0 -> b[z] = b[z - 1]; b[z - 1] = 0; z = z - 1 }
  :: d_step { z % C < C - 1 -> b[z] = b[z + 1]; b[z + 1] = 0; z = z + 1 }
  :: d_step { z >= C -> b[z] = b[z - C]; b[z - C] = 0; z = z - C }
  :: d_step { z < N - C -> b[z] = b[z + C]; b[z + C] = 0; z = z + C }
  od
}
