#include "symbolize/prepared_symbolizers.h"

namespace memloupe::symbolize {

void PreparedSymbolizers::prepare_frames(const Module& module) {
  if (ElfFile* file = frames_.file_quietly(module)) file->prepare();
}

}  // namespace memloupe::symbolize
