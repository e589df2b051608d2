/* A 32-bit x86 program for the attach tests' refusal, with no C library (the
   machine need not have 32-bit libraries): sleeps 3 s, exits 0. */
        .data
delay:  .long 3, 0
        .text
        .globl _start
_start: movl $162, %eax      /* nanosleep(&delay, NULL) */
        movl $delay, %ebx
        xorl %ecx, %ecx
        int $0x80
        movl $1, %eax        /* exit(0) */
        xorl %ebx, %ebx
        int $0x80
