/* cmd_completion.c - `trainyard completion bash|zsh`: a completion script
 * that asks the binary itself what to offer, so that it never falls behind
 * the commands: their names (`completion __commands`), the flags of the
 * commands on the shared flag parser (TRAINYARD_COMPLETE_FLAGS, flags.c;
 * the others' from their --help), the resource types the API serves
 * (`completion __resources`), and namespaces and training jobs from the
 * server the user's kubeconfig names. */
#include <stdio.h>
#include <string.h>

#include "api/registry.h"
#include "cli/cli.h"


/* The bash function. Words before the cursor go to the binary with
 * TRAINYARD_COMPLETE_FLAGS only for commands on the shared parser (listed
 * by __commands --parsed): any other would run. */
static const char bash_script[] =
    "# trainyard completion for bash: source <(trainyard completion bash)\n"
    "_trainyard_words() { compgen -W \"$1\" -- \"$2\"; }\n"
    "_trainyard() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    "    local bin=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} words\n"
    "    COMPREPLY=()\n"
    "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
    "        COMPREPLY=($(_trainyard_words \"$(\"$bin\" completion __commands 2>/dev/null)\" \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    case $prev in\n"
    "    -n|--namespace)\n"
    "        words=$(\"$bin\" get namespaces -o name 2>/dev/null | sed 's,.*/,,')\n"
    "        COMPREPLY=($(_trainyard_words \"$words\" \"$cur\")); return ;;\n"
    "    -f|--filename|--kubeconfig|--data-dir|--output-file|--tls-cert-file|--tls-private-key-file|--scheduler-conf)\n"
    "        COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
    "    esac\n"
    "    if [[ $cur == -* ]]; then\n"
    "        if \"$bin\" completion __commands --parsed 2>/dev/null | grep -qx -- \"$cmd\"; then\n"
    "            words=$(TRAINYARD_COMPLETE_FLAGS=1 \"$bin\" \"${COMP_WORDS[@]:1:COMP_CWORD-1}\" </dev/null 2>/dev/null)\n"
    "        else\n"
    "            words=$(\"$bin\" \"$cmd\" --help 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)\n"
    "        fi\n"
    "        COMPREPLY=($(_trainyard_words \"$words --help\" \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    case $cmd in\n"
    "    get|describe|explain)\n"
    "        if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
    "            words=\"$(\"$bin\" completion __resources 2>/dev/null) $(\"$bin\" list -o name 2>/dev/null)\"\n"
    "            COMPREPLY=($(_trainyard_words \"$words\" \"$cur\"))\n"
    "        else\n"
    "            words=$(\"$bin\" get \"${COMP_WORDS[2]}\" -o name 2>/dev/null | sed 's,.*/,,')\n"
    "            COMPREPLY=($(_trainyard_words \"$words\" \"$cur\"))\n"
    "        fi ;;\n"
    "    logs|delete|suspend|resume|top|scancel)\n"
    "        case $cmd/$COMP_CWORD in\n"
    "        top/2) words=\"node job\" ;;\n"
    "        scancel/*) words=$(\"$bin\" squeue -h -o %i 2>/dev/null) ;;\n"
    "        *) words=$(\"$bin\" list -o name 2>/dev/null) ;;\n"
    "        esac\n"
    "        COMPREPLY=($(_trainyard_words \"$words\" \"$cur\")) ;;\n"
    "    submit)\n"
    "        [ \"$COMP_CWORD\" -eq 2 ] &&\n"
    "            COMPREPLY=($(_trainyard_words \"pytorch tf mpi xgboost paddle jax mx ms volcano\" \"$cur\")) ;;\n"
    "    queue)\n"
    "        if [ \"$COMP_CWORD\" -eq 2 ]; then words=\"list get\"\n"
    "        else words=$(\"$bin\" get queues -o name 2>/dev/null | sed 's,.*/,,'); fi\n"
    "        COMPREPLY=($(_trainyard_words \"$words\" \"$cur\")) ;;\n"
    "    completion)\n"
    "        COMPREPLY=($(_trainyard_words \"bash zsh\" \"$cur\")) ;;\n"
    "    *)\n"
    "        COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
    "    esac\n"
    "}\n"
    "complete -F _trainyard trainyard\n";

static void completion_usage(FILE *f)
{
    fprintf(f, "usage: trainyard completion bash|zsh\n\n"
               "Prints a shell completion script. Load it in the current shell with\n"
               "  source <(trainyard completion bash)      # bash\n"
               "  source <(trainyard completion zsh)       # zsh\n"
               "or for every shell, e.g.\n"
               "  trainyard completion bash > /etc/bash_completion.d/trainyard\n");
}

int cmd_completion(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        completion_usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "__commands")) {
        cli_list_commands(stdout, argc == 3 && !strcmp(argv[2], "--parsed"));
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "__resources")) {
        size_t n;
        const api_resource *const *all = api_resources(&n);
        for (size_t i = 0; i < n; i++)
            if (all[i]->plural && !strchr(all[i]->plural, '/'))
                printf("%s\n", all[i]->plural);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "bash")) {
        fputs(bash_script, stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "zsh")) {
        /* zsh runs bash completion functions through bashcompinit */
        printf("#compdef trainyard\n"
               "# trainyard completion for zsh: source <(trainyard completion zsh)\n"
               "autoload -U +X compinit && compinit\n"
               "autoload -U +X bashcompinit && bashcompinit\n%s",
               bash_script);
        return 0;
    }
    if (argc == 2)
        fprintf(stderr, "error: no completion for the shell \"%s\": want bash or zsh\n", argv[1]);
    completion_usage(stderr);
    return 2;
}
