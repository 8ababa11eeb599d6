// The `switchyard` subcommands; each returns the process exit status.
#pragma once

namespace sy::cli {

int cmd_run(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_doctor(int argc, char** argv);
int cmd_bench(int argc, char** argv);

}  // namespace sy::cli
