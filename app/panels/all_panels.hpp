// Every panel, one struct each (one file each under app/panels/): App::Panels, for the files
// that draw them (app.cpp, layout.cpp, the classroom features).
#pragma once
#include "app/app.hpp"
#include "app/panels/about_panel.hpp"
#include "app/panels/attention_panel.hpp"
#include "app/panels/callstack_panel.hpp"
#include "app/panels/errata_panel.hpp"
#include "app/panels/file_browser.hpp"
#include "app/panels/fillin_panel.hpp"
#include "app/panels/gpu_panel.hpp"
#include "app/panels/layernorm_panel.hpp"
#include "app/panels/model_builder.hpp"
#include "app/panels/notation_panel.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/pseudocode_panel.hpp"
#include "app/panels/sampling_panel.hpp"
#include "app/panels/tensor_panel.hpp"
#include "app/panels/tokenizer_panel.hpp"
#include "app/panels/toolbar_panel.hpp"
#include "app/panels/training_panel.hpp"
#include "app/panels/translation_panel.hpp"
#include "app/panels/variables_panel.hpp"
#include "app/panels/welcome_panel.hpp"

namespace sf {

// Every panel, one struct each (one file each under app/panels/).
struct App::Panels {
  ToolbarPanel toolbar;
  PseudocodePanel pseudocode;
  CallStackPanel callstack;
  VariablesPanel variables;
  TensorPanel tensor;
  AttentionPanel attention;
  LayerNormPanel layernorm;
  SamplingPanel sampling;
  FillInPanel fillin;
  TranslationPanel translation;
  TrainingPanel training;
  GpuPanel gpu;
  FileBrowser files;
  AboutPanel about;
  ModelBuilder builder;
  ErrataPanel errata;
  NotationPanel notation;
  TokenizerPanel tokenizer;
  WelcomePanel welcome;
};

}  // namespace sf
