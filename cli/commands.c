/* commands.c — `ngpt <command> [options]`: the command table and cli_main,
 * which dispatches to it (cli/main.c holds the process's main, so tests and
 * fuzz targets can call cli_main). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command commands[] = {
    {"init", "create a model with fresh weights and save it", cli_cmd_init},
    {"info", "print a model's config, tokenizer, parameters, file and arena sizes (a file, config.json, llama2.c .bin or --config)",
     cli_cmd_info},
    {"checksum", "print XXH3 checksums of parameters and logits (determinism check)",
     cli_cmd_checksum},
    {"import", "turn a Hugging Face GPT-2 or Llama (SmolLM2) model, or llama2.c's files, into an ngpt model",
     cli_cmd_import},
    {"quantize", "write a model with 8-bit or 4-bit (--weights q4) weights for inference",
     cli_cmd_quantize},
    {"lora", "LoRA adapters: import or export PEFT's (Hugging Face) adapters, merge into a model",
     cli_cmd_lora},
    {"train", "train a model on text files (or the bundled corpus), or fine-tune one (--init), with resume",
     cli_cmd_train},
    {"eval", "print a model's loss, bits per byte and perplexity on held-out text (--compare: two models)", cli_cmd_eval},
    {"generate", "stream a completion of a prompt (sampling, beam search, speculative decoding)", cli_cmd_generate},
    {"chat", "chat with a model, a line a turn (ChatML, or the original's system/user/assistant format)", cli_cmd_chat},
    {"trace", "draw a prompt's attention maps as SVG (or a text table)", cli_cmd_trace},
    {"bench", "measure prefill, decode, training and kernel speed on this machine", cli_cmd_bench},
    {"tokenizer", "train, inspect or run a BPE tokenizer (train, encode, decode, info, import-gpt2, import-hf)",
     cli_cmd_tokenizer},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: ngpt <command> [options]    (ngpt <command> --help for details)\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n%s\n", ngpt_build_info());
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("%s\n", ngpt_build_info());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ngpt: unknown command \"%s\"\n\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
