# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_sm120_doctor_global_optspecs
    string join \n demo snapshot= collect-env= launch= launch-file= launch-with= service= container= log= answer= answers= kb= onboard h/help V/version
end

function __fish_sm120_doctor_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_sm120_doctor_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_sm120_doctor_using_subcommand
    set -l cmd (__fish_sm120_doctor_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l snapshot -d 'A snapshot file (YAML or JSON) written by this tool, or a JSON report' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l collect-env -d 'The output of `vllm collect-env` or `python -m torch.utils.collect_env`' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l launch -d 'The vLLM launch command, as you run it' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l launch-file -d 'A file holding the launch: a command or script, a docker compose file, a Kubernetes manifest, vLLM production-stack Helm values, a systemd unit, or an env file' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l launch-with -d 'A file the launch reads (repeatable): a script it sources, docker\'s --env-file, compose\'s .env or env_file:, a unit\'s EnvironmentFile=, vLLM\'s --config YAML. Read, and edited by `fix`, where it is used (a --config file is only read: the command line wins over it)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l service -d 'The compose service, Helm modelSpec name or script command (a model, a served model name, a container name or line:N) that is the vLLM launch, when there are several' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l container -d 'The Kubernetes container (NAME or Kind/name/NAME) that is the vLLM launch' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l log -d 'A log file from the failing run (repeatable)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l answer -d 'Answer a question the tool cannot decide: NODE=yes|no|unsure (repeatable)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l answers -d 'A YAML file of answers (`node: yes`)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l kb -d 'Use this knowledge-base directory instead of the embedded one' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l demo -d 'Use the embedded demo scenario (the #47266 reporter\'s 2× RTX PRO 6000 host)'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -l onboard -d 'Walk the onboarding checklist for a new Blackwell workstation as well'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -s V -l version -d 'Print version'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "check" -d 'Diagnose a host: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input)'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "classify" -d 'Match log files against the known failure signatures only'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "report" -d 'Write a diagnostic report (Markdown for a GitHub issue, JSON, or text), redacted by default'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "fix" -d 'Apply remedies to a vLLM launch: a command, script, `docker run`, compose file, Kubernetes manifest, Helm values, systemd unit or env file'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "patch-script" -d 'Write a bash script that applies a vLLM PR (#43923) safely: dry-run, backup, rollback'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "kb" -d 'Knowledge-base tools'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "snapshot" -d 'Collect this host live and write the snapshot (YAML; JSON when FILE ends in .json)'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "probe" -d 'Live probes that measure on this host'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh or fish)'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "man" -d 'Print the man page, or write every page into a directory with -o'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "__p2p-child" -d 'The child side of `probe p2p` (internal)'
complete -c sm120-doctor -n "__fish_sm120_doctor_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l snapshot -d 'A snapshot file (YAML or JSON) written by this tool, or a JSON report' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l collect-env -d 'The output of `vllm collect-env` or `python -m torch.utils.collect_env`' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l launch -d 'The vLLM launch command, as you run it' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l launch-file -d 'A file holding the launch: a command or script, a docker compose file, a Kubernetes manifest, vLLM production-stack Helm values, a systemd unit, or an env file' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l launch-with -d 'A file the launch reads (repeatable): a script it sources, docker\'s --env-file, compose\'s .env or env_file:, a unit\'s EnvironmentFile=, vLLM\'s --config YAML. Read, and edited by `fix`, where it is used (a --config file is only read: the command line wins over it)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l service -d 'The compose service, Helm modelSpec name or script command (a model, a served model name, a container name or line:N) that is the vLLM launch, when there are several' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l container -d 'The Kubernetes container (NAME or Kind/name/NAME) that is the vLLM launch' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l log -d 'A log file from the failing run (repeatable)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l answer -d 'Answer a question the tool cannot decide: NODE=yes|no|unsure (repeatable)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l answers -d 'A YAML file of answers (`node: yes`)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l kb -d 'Use this knowledge-base directory instead of the embedded one' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l probe -d 'Run a live probe on this host first and diagnose with what it measures (live host only): `p2p`, the functional peer-to-peer test (`probe p2p`; the launch\'s TP group, else every GPU)' -r -f -a "p2p\t'The functional peer-to-peer probe (`probe p2p`)'"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l format -r -f -a "text\t''
json\t''
prometheus\t'Prometheus text exposition format, for node_exporter\'s textfile collector'"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -s o -l output -d 'Write to FILE atomically instead of stdout (e.g. node_exporter\'s textfile directory)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l remedy -d 'The remedy you choose for the fix plan (repeatable); each finding at warning or above gets its cheapest otherwise' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l demo -d 'Use the embedded demo scenario (the #47266 reporter\'s 2× RTX PRO 6000 host)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l onboard -d 'Walk the onboarding checklist for a new Blackwell workstation as well'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l force -d 'Overwrite FILE when it exists'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -l redact -d 'Hide secrets, user names, home paths and the hostname in the output (as `report` does)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand classify" -l log -d 'A log file (repeatable; - reads standard input)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand classify" -l format -r -f -a "text\t''
json\t''"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand classify" -l kb -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand classify" -l redact -d 'Hide secrets, user names, home paths and the hostname in the matched lines'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand classify" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l snapshot -d 'A snapshot file (YAML or JSON) written by this tool, or a JSON report' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l collect-env -d 'The output of `vllm collect-env` or `python -m torch.utils.collect_env`' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l launch -d 'The vLLM launch command, as you run it' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l launch-file -d 'A file holding the launch: a command or script, a docker compose file, a Kubernetes manifest, vLLM production-stack Helm values, a systemd unit, or an env file' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l launch-with -d 'A file the launch reads (repeatable): a script it sources, docker\'s --env-file, compose\'s .env or env_file:, a unit\'s EnvironmentFile=, vLLM\'s --config YAML. Read, and edited by `fix`, where it is used (a --config file is only read: the command line wins over it)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l service -d 'The compose service, Helm modelSpec name or script command (a model, a served model name, a container name or line:N) that is the vLLM launch, when there are several' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l container -d 'The Kubernetes container (NAME or Kind/name/NAME) that is the vLLM launch' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l log -d 'A log file from the failing run (repeatable)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l answer -d 'Answer a question the tool cannot decide: NODE=yes|no|unsure (repeatable)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l answers -d 'A YAML file of answers (`node: yes`)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l kb -d 'Use this knowledge-base directory instead of the embedded one' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l format -r -f -a "md\t'Markdown for a GitHub issue'
json\t'The whole model (replayable with `--snapshot`)'
text\t'Plain text'"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -s o -l output -d 'Write to FILE (atomically) instead of stdout' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l remedy -d 'The remedy you chose, by id (repeatable); each finding shows the cheapest otherwise' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l demo -d 'Use the embedded demo scenario (the #47266 reporter\'s 2× RTX PRO 6000 host)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l onboard -d 'Walk the onboarding checklist for a new Blackwell workstation as well'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l force -d 'Overwrite FILE when it exists'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l no-redact -d 'Keep secrets, user names, home paths and the hostname in the report'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -l redact-gpu-uuids -d 'Hide GPU UUIDs as well'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l launch -d 'The vLLM launch command, as you run it' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l launch-file -d 'A file holding the launch: a command or script, a docker compose file, a Kubernetes manifest, production-stack Helm values, a systemd unit, or an env file' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l launch-with -d 'A file the launch reads (repeatable): a script it sources, docker\'s --env-file, compose\'s .env or env_file:, a unit\'s EnvironmentFile=, vLLM\'s --config YAML. Edited where the setting lives (a --config file is only read: a flag fix adds wins over it)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l service -d 'The compose service, Helm modelSpec or script command (a model, served name, container name or line:N) to fix, when the file holds several' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l container -d 'The Kubernetes container (NAME or Kind/name/NAME) to fix' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l remedy -d 'A remedy id from the knowledge base (repeatable; applied in order)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l format -r -f -a "text\t'The rewritten launch, whole'
diff\t'A unified diff against the launch as given'"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -s o -l output -d 'Write the rewritten launch to FILE (atomically); without it nothing is written' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l kb -d 'Use this knowledge-base directory instead of the embedded one' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -l force -d 'Overwrite FILE when it exists'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand fix" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -l pr -d 'The vLLM pull request to apply' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -l python -d 'The Python that runs vLLM, as the script\'s default (its --python overrides it)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -l vllm-dir -d 'A vLLM git checkout to patch, as the script\'s default (its --vllm-dir overrides it)' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -s o -l output -d 'Where to write the script' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -l kb -d 'Use this knowledge-base directory instead of the embedded one' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -l force -d 'Overwrite FILE when it exists'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand patch-script" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and not __fish_seen_subcommand_from lint facts help" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and not __fish_seen_subcommand_from lint facts help" -f -a "lint" -d 'Validate a knowledge-base directory (default: the embedded one)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and not __fish_seen_subcommand_from lint facts help" -f -a "facts" -d 'List the facts that checks may use'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and not __fish_seen_subcommand_from lint facts help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and __fish_seen_subcommand_from lint" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and __fish_seen_subcommand_from facts" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "lint" -d 'Validate a knowledge-base directory (default: the embedded one)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "facts" -d 'List the facts that checks may use'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand kb; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -s o -l output -d 'Write to FILE instead of stdout (never overwrites without --force)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l python -d 'The Python interpreter to inspect (default: active venv, conda env, else python3)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l python-timeout -d 'Time limit for the Python script, seconds' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l force -d 'Overwrite FILE if it exists'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l no-python -d 'Do not run Python at all'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l probe -d 'Run the allocator/IPC probe too and record it in the snapshot'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -l timings -d 'Print each source\'s collection time to stderr'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand snapshot" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and not __fish_seen_subcommand_from ipc p2p help" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and not __fish_seen_subcommand_from ipc p2p help" -f -a "ipc" -d 'Can memory from the engine\'s allocator config be exported through legacy CUDA IPC? Exit 0: probed (or skipped with the reason); 1: the engine\'s config was refused; 2: bad input'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and not __fish_seen_subcommand_from ipc p2p help" -f -a "p2p" -d 'Does peer-to-peer really work between the GPUs? Writes a pattern both ways for every pair, reads every byte back, measures GB/s, in a child process under a hard time limit. Exit 0: every pair ok (or skipped with the reason); 1: a pair hung, got wrong data or failed, or the probe could not run; 2: bad input'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and not __fish_seen_subcommand_from ipc p2p help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l python -d 'The Python interpreter whose torch is probed (default: active venv, conda env, else python3)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l launch -d 'The vLLM launch command: its allocator variables are the engine\'s' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l launch-file -d 'A file holding the launch command' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l timeout -d 'Time limit for each torch child, seconds' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l format -r -f -a "text\t''
json\t''"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -l native-only -d 'Only the CUDA driver API path (no Python)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from ipc" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l gpus -d 'The GPUs to pair, as CUDA indices (e.g. 0,1); default: every GPU CUDA sees' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l tp -d 'The tensor-parallel size: GPUs 0 to N-1, the ones vLLM\'s TP group would take' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l timeout -d 'Hard time limit for the probe child, seconds; a pair still copying then is "hung"' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l size-mib -d 'MiB per copy' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l iterations -d 'Timed copies per direction and method' -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l format -r -f -a "text\t''
json\t''"
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l child-program -d 'Run PATH as the probe child instead of this executable (for tests)' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l no-nvml -d 'Do not ask NVML for its P2P status'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -l trace -d 'Print every line of the child with its arrival time to stderr'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from p2p" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from help" -f -a "ipc" -d 'Can memory from the engine\'s allocator config be exported through legacy CUDA IPC? Exit 0: probed (or skipped with the reason); 1: the engine\'s config was refused; 2: bad input'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from help" -f -a "p2p" -d 'Does peer-to-peer really work between the GPUs? Writes a pattern both ways for every pair, reads every byte back, measures GB/s, in a child process under a hard time limit. Exit 0: every pair ok (or skipped with the reason); 1: a pair hung, got wrong data or failed, or the probe could not run; 2: bad input'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand probe; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand completions" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand man" -s o -l output -d 'Write every page (sm120-doctor.1 and one per subcommand) into DIR instead of printing the main page' -r -F
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand man" -l force -d 'Overwrite pages that exist in DIR'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand man" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand __p2p-child" -l gpus -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand __p2p-child" -l bytes -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand __p2p-child" -l iterations -r
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand __p2p-child" -s h -l help -d 'Print help'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "check" -d 'Diagnose a host: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "classify" -d 'Match log files against the known failure signatures only'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "report" -d 'Write a diagnostic report (Markdown for a GitHub issue, JSON, or text), redacted by default'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "fix" -d 'Apply remedies to a vLLM launch: a command, script, `docker run`, compose file, Kubernetes manifest, Helm values, systemd unit or env file'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "patch-script" -d 'Write a bash script that applies a vLLM PR (#43923) safely: dry-run, backup, rollback'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "kb" -d 'Knowledge-base tools'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "snapshot" -d 'Collect this host live and write the snapshot (YAML; JSON when FILE ends in .json)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "probe" -d 'Live probes that measure on this host'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "completions" -d 'Print a shell completion script (bash, zsh or fish)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "man" -d 'Print the man page, or write every page into a directory with -o'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "__p2p-child" -d 'The child side of `probe p2p` (internal)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and not __fish_seen_subcommand_from check classify report fix patch-script kb snapshot probe completions man __p2p-child help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "lint" -d 'Validate a knowledge-base directory (default: the embedded one)'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and __fish_seen_subcommand_from kb" -f -a "facts" -d 'List the facts that checks may use'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and __fish_seen_subcommand_from probe" -f -a "ipc" -d 'Can memory from the engine\'s allocator config be exported through legacy CUDA IPC? Exit 0: probed (or skipped with the reason); 1: the engine\'s config was refused; 2: bad input'
complete -c sm120-doctor -n "__fish_sm120_doctor_using_subcommand help; and __fish_seen_subcommand_from probe" -f -a "p2p" -d 'Does peer-to-peer really work between the GPUs? Writes a pattern both ways for every pair, reads every byte back, measures GB/s, in a child process under a hard time limit. Exit 0: every pair ok (or skipped with the reason); 1: a pair hung, got wrong data or failed, or the probe could not run; 2: bad input'
