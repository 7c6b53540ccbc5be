"""A miss from the thirtieth corpus batch's work part:

- DeepSpeed's launcher reports a worker that did not exit cleanly from its
  sigkill_handler (deepspeed/launcher/launch.py) as "{cmd} exits with return
  code = {returncode}", the returncode being subprocess.Popen's: -N when the
  worker was killed by signal N. "= -9" is a SIGKILL from outside, most
  often the kernel's OOM killer, and says so as plainly as torchrun's
  "failed (exitcode: -9)"; a positive code is the worker's own exit and
  "= -15" a SIGTERM, neither of which is a kill.
"""
from conftest import diagnose_text, leading_incident

# DeepSpeed-Chat step 1 with opt-125m on Colab (deepspeedai/DeepSpeed#3232,
# as posted).
DEEPSPEED_SIGKILL = """\
[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266
[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', '--local_rank=0', '--data_path', 'Dahoas/rm-static', 'Dahoas/full-hh-rlhf', 'Dahoas/synthetic-instruct-gptj-pairwise', 'yitingxie/rlhf-reward-datasets', 'openai/webgpt_comparisons', 'stanfordnlp/SHP', '--data_split', '2,4,4', '--model_name_or_path', 'facebook/opt-125m', '--per_device_train_batch_size', '2', '--per_device_eval_batch_size', '8', '--max_seq_len', '512', '--learning_rate', '9.65e-6', '--weight_decay', '0.1', '--num_train_epochs', '2', '--gradient_accumulation_steps', '1', '--lr_scheduler_type', 'cosine', '--num_warmup_steps', '0', '--seed', '1234', '--zero_stage', '2', '--deepspeed', '--output_dir', '/content/DeepSpeedExamples/applications/DeepSpeed-Chat/output/actor-models/125m'] exits with return code = -9
"""

# A LLaMA-Factory run that ended after saving a checkpoint
# (deepspeedai/DeepSpeed#5302, as posted): the worker's own exit status 1.
DEEPSPEED_EXIT_1 = """\
[2024-03-20 20:31:29,210] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3353707
[2024-03-20 20:31:29,240] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 3353708
[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] ['/data/anaconda3/envs/llama/bin/python', '-u', 'src/train_bash.py', '--local_rank=4', '--stage', 'sft', '--deepspeed', 'configs/deepspeed_zero3_config.json', '--do_train', '--model_name_or_path', '/for_llm_model/', '--dataset', 'fin_', '--template', 'qwen', '--finetuning_type', 'full', '--output_dir', '/data_c/', '--overwrite_cache', '--per_device_train_batch_size', '1', '--gradient_accumulation_steps', '4', '--lr_scheduler_type', 'cosine', '--logging_steps', '10', '--save_steps', '1000', '--learning_rate', '5e-5', '--num_train_epochs', '2.0', '--plot_loss', '--fp16', '--cutoff_len', '4096', '--flash_attn'] exits with return code = 1
"""


def test_deepspeed_launcher_reports_a_sigkilled_worker(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, DEEPSPEED_SIGKILL, rule="process-sigkilled",
                     line="exits with return code = -9")


def test_a_worker_exit_status_is_not_a_kill(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, DEEPSPEED_EXIT_1)
    assert found, found
    assert not [inc for inc in found if inc["rule"] == "process-sigkilled"], found
