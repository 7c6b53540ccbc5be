/* The default ruleset, compiled from rulesets/ at build time and embedded in
   the library's read-only data so that no file is needed at run time. */
    .section .rodata.fl_default_ruleset, "a"
    .balign 16
    .globl fl_internal_default_ruleset_begin
    .hidden fl_internal_default_ruleset_begin
fl_internal_default_ruleset_begin:
    .incbin FL_DEFAULT_RULESET_PATH
    .globl fl_internal_default_ruleset_end
    .hidden fl_internal_default_ruleset_end
fl_internal_default_ruleset_end:
    .byte 0
    .section .note.GNU-stack, "", @progbits
