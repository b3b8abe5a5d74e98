// Spoken words made on the machine: espeak-ng (a Debian package) says a text in a given voice,
// variant, speed and pitch, and the WAV it writes to a pipe is read back (audio/wav.hpp).
// espeak-ng is run directly, with its arguments as an argument vector, never through a shell.
//
//   attn::audio::Voice v{"en-us", "Alex", 160, 50};
//   attn::audio::Wave w = attn::audio::speak("three seven one", v);   // 22,050 samples a second
#pragma once

#include "wav.hpp"

#include <string>

namespace attn::audio {

struct Voice {
  std::string language = "en-us";  // espeak-ng -v: en-us, en-gb, en-gb-scotland, en-029, ...
  std::string variant;             // one of espeak-ng --voices=variant (Alex, Annie, ...); "" for none
  int speed = 160;                 // words per minute (espeak-ng -s), 80 .. 450
  int pitch = 50;                  // 0 .. 99 (espeak-ng -p)
};

// "en-us+Alex" as espeak-ng -v takes it.
std::string voice_name(const Voice& voice);

// The WAV espeak-ng writes for `text`. IOError naming the command when espeak-ng is missing
// (tools/setup.sh installs it) or fails; ValueError on a speed, pitch or name
// outside its range (names: letters, digits, '-' and '_' only).
Wave speak(const std::string& text, const Voice& voice, const std::string& program = "espeak-ng");

}  // namespace attn::audio
