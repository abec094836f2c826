/* main.c — the ngpt program's main. Kept apart from cli_main (commands.c) so
 * the fuzz targets and tests link every command without a second main. */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
