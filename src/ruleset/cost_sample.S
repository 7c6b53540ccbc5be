/* The reference sample of the compiler's cost check (pattern_cost.h):
   ordinary lines of the bench generator's logs (bench/cost_sample.py),
   embedded so that every build estimates on the same bytes. */
    .section .rodata.fl_cost_sample, "a"
    .globl fl_internal_cost_sample_begin
    .hidden fl_internal_cost_sample_begin
fl_internal_cost_sample_begin:
    .incbin FL_COST_SAMPLE_PATH
    .globl fl_internal_cost_sample_end
    .hidden fl_internal_cost_sample_end
fl_internal_cost_sample_end:
    .byte 0
    .section .note.GNU-stack, "", @progbits
