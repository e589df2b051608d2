// A preload library that records nothing: stands for a program that removed
// memloupe's preload library from its environment.
extern "C" int memloupe_launcher_noop() { return 0; }
