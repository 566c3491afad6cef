// The `tilert` subcommands, one file each; main.cc dispatches on this list.
#pragma once

#include "frontends/cli/cli_common.h"

namespace tilert::cli {

extern const Command kCompileCommand;  // compile.cc
extern const Command kDisCommand;      // dis.cc
extern const Command kVerifyCommand;   // verify.cc
extern const Command kRunCommand;      // run.cc
extern const Command kDevicesCommand;  // devices.cc
extern const Command kLowerCommand;    // lower.cc
extern const Command kProfileCommand;  // profile.cc

}  // namespace tilert::cli
