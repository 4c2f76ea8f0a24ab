#!/usr/bin/env bash
# Retakes the README's screenshots whose scenes are scripted here (docs/screenshots/NAME.png) with the
# app built in ./build, under Xvfb. Usage: scripts/screenshots.sh [NAME...] (default: all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
# The pointer is parked in a corner (mouse:) so that no tooltip covers the view.
declare -A SIZE=(
  [presentation-1280x720]=1280x720 [translation]=1600x1000 [ed-attention]=1600x1000
  [tensor-light]=1600x1000 [layernorm]=1600x1000 [training]=1600x1000 [gpu-calls]=1366x768
  [attention-adjoint]=1600x1000 [gradflow-pre-ln]=1280x900 [gradflow-post-ln]=1280x900 [flash-blocks]=1920x1080
  [vit-attention]=1366x768 [vision]=1366x768)
declare -A ARGS=(
  [presentation-1280x720]='--actions lesson-open:02-one-attention-head,lesson-go:5,presentation:on,mouse:1275:715'
  [translation]='--model assets/ed.safetensors --actions context:12 march 2024,translate-all,wait,open:translation,mouse:1590:990'
  [ed-attention]='--model assets/ed.safetensors --actions context:12 march 2024,goto:4:6:2:2,open:attention,mouse:1590:990'
  [tensor-light]='--actions theme:light,goto:10:8:1,step-back,open:tensor,mouse:1590:990'
  [layernorm]='--actions goto:6:2:1:0:3,open:layernorm,mouse:1590:990'
  [training]='--actions open:training,train-step:300,wait,mouse:1590:990'
  [gpu-calls]='--model assets/ed.safetensors --actions context:12 march 2024,attention:gpu,goto:5:4,open:gpu,mouse:1360:760'
  # Issue 24: a traced update's first Attention adjoint (layer 2, head 4), and the Gradient flow tab
  # of lesson 10's two 8-layer GPTs at initialisation, pre-LN and post-LN (shown side by side in the README).
  [attention-adjoint]='--actions open:training,train-step:1,train-trace,breakpoint-adjoint:4:6,continue,open:attention,attention-views:both,mouse:1590:990'
  [gradflow-pre-ln]='--model assets/lessons/pre-ln-init.safetensors --actions prompt:hello world=,close:variables,close:callstack,open:gradflow,mouse:1275:895'
  [gradflow-post-ln]='--model assets/lessons/post-ln-init.safetensors --actions prompt:hello world=,close:variables,close:callstack,open:gradflow,mouse:1275:895'
  # Issue 25: Algorithm 4-F's blocks in the Attention tab, line 10 of block (i = 2, j = 2) of layer 1, head 1
  # (step 96 of lesson 12's model on "hello=").
  [flash-blocks]='--model assets/lessons/flash-default.safetensors --actions open:attention,jump:96,mouse:1910:1070'
  # Issue 26: the vision transformer's Algorithm 4 line 6 (layer 1, head 1), its patch tokens labelled by their pixels.
  [vit-attention]='--model assets/vit-digits.safetensors --actions goto:4:6,open:attention,mouse:1360:760'
  # The Vision tab: held-out test digit 7 (an 8), the class token's attention in layer 2, the mean over the heads.
  [vision]='--model assets/vit-digits.safetensors --actions open:vision,vision-digit:7,vision-layer:2,vision-head:mean,step-into,mouse:1360:760')
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(presentation-1280x720 translation ed-attention tensor-light layernorm training gpu-calls
                                  attention-adjoint gradflow-pre-ln gradflow-post-ln flash-blocks vit-attention vision)
for n in "${names[@]}"; do
  [ -n "${SIZE[$n]:-}" ] || { echo "screenshots: no scene \"$n\" (known: ${!SIZE[*]})" >&2; exit 1; }
  args=${ARGS[$n]}
  # The actions contain spaces (a context): split only before --actions' value.
  model=(); [[ $args == --model* ]] && { model=(--model "$(cut -d' ' -f2 <<< "$args")"); args=${args#* * }; }
  xvfb-run -a -s "-screen 0 2560x1440x24" build/app/stepformer --no-ini --size "${SIZE[$n]}" --frames 14 \
    "${model[@]}" --actions "${args#--actions }" --screenshot "docs/screenshots/$n.png" > /dev/null
  echo "screenshots: docs/screenshots/$n.png"
done
