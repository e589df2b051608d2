// A raw system call, never through libc's wrappers: it touches no thread-local
// state, so it leaves the program's errno alone and works on a thread glibc does
// not know about (the recorder's flush thread). Inline, so that code built for
// the inside of malloc (the recorder) and the readers use the same one.
#pragma once

namespace memloupe::format {

// Returns the result, or -errno.
inline long sys_call(long number, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                     long a6 = 0) noexcept {
#if defined(__x86_64__)
  long ret;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  register long r9 asm("r9") = a6;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 asm("x8") = number;
  register long x0 asm("x0") = a1;
  register long x1 asm("x1") = a2;
  register long x2 asm("x2") = a3;
  register long x3 asm("x3") = a4;
  register long x4 asm("x4") = a5;
  register long x5 asm("x5") = a6;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
#else
#error "sys_call: add this architecture's system call convention"
#endif
}

}  // namespace memloupe::format
