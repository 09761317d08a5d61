; LLVM-level reproducer of select-of-reloads.pisa (hand-written; llc 14 and 15 abort):
;   llc-15 -O2 -mattr=+avx2 select-of-loads.ll -o /dev/null
; -> LLVM ERROR: Cannot emit physreg copy instruction (Post-RA pseudo instruction expansion).
; It compiles with +avx512f,+avx512vl, with -avx2, with <4 x ...> vectors, with a 32-bit
; compare, with a 16-bit select, or when one select operand is not a load.
define void @f(<8 x i64>* %pq, <8 x i64>* %pr, <8 x i32>* %pa, <8 x i32>* %pb, <8 x i64>* %out) {
  %q = load <8 x i64>, <8 x i64>* %pq, align 64
  %r = load <8 x i64>, <8 x i64>* %pr, align 64
  %a = load <8 x i32>, <8 x i32>* %pa, align 32
  %b = load <8 x i32>, <8 x i32>* %pb, align 32
  %c = icmp ne <8 x i64> %r, %q
  %s = select <8 x i1> %c, <8 x i32> %a, <8 x i32> %b
  %z = zext <8 x i32> %s to <8 x i64>
  store <8 x i64> %z, <8 x i64>* %out, align 64
  ret void
}
