// PNG encode / decode round trips and the background encoder.
#include <handoff/error.hpp>
#include <handoff/media/png.hpp>

#include "test_util.hpp"

#include <gmock/gmock.h>

#include <cstdio>
#include <random>

namespace handoff::media {
namespace {

using test::message_of;
using test::TempDir;
using ::testing::HasSubstr;

Image8 random_image(std::uint32_t w, std::uint32_t h, std::uint32_t channels, unsigned seed) {
  Image8 img;
  img.width = w;
  img.height = h;
  img.channels = channels;
  img.pixels.resize(img.stride() * h);
  std::mt19937 rng(seed);
  for (auto& p : img.pixels) p = std::uint8_t(rng());
  return img;
}

TEST(Png, RoundTripRgbAndRgba) {
  for (std::uint32_t channels : {3u, 4u}) {
    const Image8 img = random_image(13, 7, channels, channels);
    const std::vector<std::uint8_t> png = encode_png(img);
    ASSERT_GT(png.size(), 8u);
    EXPECT_EQ(png[1], 'P');
    const Image8 back = decode_png(png.data(), png.size(), channels);
    EXPECT_EQ(back.width, 13u);
    EXPECT_EQ(back.height, 7u);
    EXPECT_EQ(back.pixels, img.pixels);
  }
}

// Fast settings (level 1, the Sub filter) are still lossless, and smooth
// content still compresses.
TEST(Png, FastSettingsRoundTrip) {
  for (std::uint32_t channels : {3u, 4u}) {
    Image8 img = random_image(64, 32, channels, 7);
    const Image8 noise = img;
    for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = std::uint8_t((i / channels) % 64);
    const std::vector<std::uint8_t> png = encode_png(img, PngSpeed::Fast);
    EXPECT_LT(png.size(), img.pixels.size() / 4) << "a ramp compresses";
    EXPECT_EQ(decode_png(png.data(), png.size(), channels).pixels, img.pixels);
    const std::vector<std::uint8_t> noisy = encode_png(noise, PngSpeed::Fast);
    EXPECT_EQ(decode_png(noisy.data(), noisy.size(), channels).pixels, noise.pixels);
  }
}

TEST(Png, WriteAndReadFile) {
  TempDir dir;
  const Image8 img = random_image(5, 9, 3, 42);
  write_png(dir / "a.png", img);
  const Image8 back = read_png(dir / "a.png");
  EXPECT_EQ(back.pixels, img.pixels);
  // RGB read as RGBA gains an opaque alpha.
  const Image8 rgba = read_png(dir / "a.png", 4);
  EXPECT_EQ(rgba.pixels[3], 255);
  EXPECT_EQ(rgba.pixels[4], img.pixels[3]);
}

TEST(Png, Errors) {
  Image8 bad;
  EXPECT_THROW(encode_png(bad), UsageError);
  Image8 short_pixels = random_image(4, 4, 3, 1);
  short_pixels.pixels.pop_back();
  EXPECT_THAT(message_of<UsageError>([&] { encode_png(short_pixels); }), HasSubstr("47 bytes of pixels, expected 48"));
  const std::uint8_t garbage[16] = {1, 2, 3};
  EXPECT_THROW(decode_png(garbage, sizeof garbage), Error);
  EXPECT_THAT(message_of<Error>([] { write_png("/nonexistent/dir/x.png", random_image(2, 2, 3, 0)); }),
              HasSubstr("/nonexistent/dir/x.png"));
  // A full disk is named as one, small or large (a whole buffered fwrite fails only at fclose's flush).
  for (std::uint32_t side : {2u, 400u})
    EXPECT_THAT(message_of<Error>([&] { write_png("/dev/full", random_image(side, side, 3, 0)); }),
                HasSubstr("No space left on device"));
}

TEST(PngEncoder, WritesEverythingAndKeepsErrors) {
  TempDir dir;
  std::vector<Image8> images;
  {
    PngEncoder enc(2);
    for (int i = 0; i < 8; ++i) {
      images.push_back(random_image(16, 8, 3, unsigned(i)));
      enc.submit(dir / ("f" + std::to_string(i) + ".png"), images.back());
    }
    enc.submit("/nonexistent/dir/bad.png", random_image(2, 2, 3, 9));
    enc.flush();
    EXPECT_EQ(enc.written(), 8u);
    const auto errors = enc.take_errors();
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0], HasSubstr("/nonexistent/dir/bad.png"));
    EXPECT_TRUE(enc.take_errors().empty());
    EXPECT_THROW(enc.submit(dir / "x.png", Image8{}), UsageError);
  }
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(read_png(dir / ("f" + std::to_string(i) + ".png")).pixels, images[std::size_t(i)].pixels) << i;
  }
}

TEST(PngEncoder, DestructorFinishesTheQueue) {
  TempDir dir;
  {
    PngEncoder enc(8);
    for (int i = 0; i < 5; ++i) enc.submit(dir / ("g" + std::to_string(i) + ".png"), random_image(32, 32, 4, unsigned(i)));
  }
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(std::filesystem::exists(dir / ("g" + std::to_string(i) + ".png"))) << i;
}

TEST(PngEncoder, SubmitFromSeveralThreads) {
  TempDir dir;
  PngEncoder enc(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) enc.submit(dir / ("t" + std::to_string(t) + "_" + std::to_string(i) + ".png"),
                                             random_image(8, 8, 3, unsigned(t * 10 + i)));
    });
  }
  for (auto& th : threads) th.join();
  enc.flush();
  EXPECT_EQ(enc.written(), 12u);
  EXPECT_TRUE(enc.take_errors().empty());
}

std::string frame_name(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "f%d.png", i);
  return name;
}

TEST(PngEncoder, SeveralEncoderThreadsWriteEveryImage) {
  TempDir dir;
  PngEncoder enc(3, 4, PngSpeed::Fast);
  for (int i = 0; i < 24; ++i) enc.submit(dir / frame_name(i), random_image(16, 9, 4, unsigned(i)));
  enc.flush();
  EXPECT_EQ(enc.written(), 24u);
  EXPECT_TRUE(enc.take_errors().empty());
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(read_png(dir / frame_name(i), 4).pixels, random_image(16, 9, 4, unsigned(i)).pixels);
}

}  // namespace
}  // namespace handoff::media
