// common::remove_tree: depth first, links removed and never followed, a missing path is no error.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.hpp"

namespace kernelrl::common {
namespace {

namespace fs = std::filesystem;

TEST(RemoveTree, RemovesNestedFoldersAndLinksWithoutFollowingThem) {
  auto base = make_temp_dir(fs::temp_directory_path(), "kernelrl-remove-tree-");
  ASSERT_TRUE(base) << base.error().message;
  const fs::path tree = *base / "tree", outside = *base / "outside";
  fs::create_directories(tree / "a" / "b" / "c");
  fs::create_directories(outside);
  std::ofstream(outside / "keep.txt") << "kept";
  std::ofstream(tree / "a" / "b" / "c" / "deep.txt") << "x";
  std::ofstream(tree / "top.txt") << "y";
  fs::create_directory_symlink(outside, tree / "a" / "link-to-outside");
  fs::create_symlink(tree / "missing", tree / "dangling");

  auto removed = remove_tree(tree);
  ASSERT_TRUE(removed) << removed.error().message;
  EXPECT_EQ(*removed, 8u);  // tree, a, b, c, deep.txt, top.txt and the two links
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_TRUE(fs::exists(outside / "keep.txt"));  // the link was removed, not followed

  auto again = remove_tree(tree);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0u);
  auto file = remove_tree(outside / "keep.txt");  // a plain file is a tree of one
  ASSERT_TRUE(file);
  EXPECT_EQ(*file, 1u);
  ASSERT_TRUE(remove_tree(*base));
  EXPECT_FALSE(fs::exists(*base));
}

}  // namespace
}  // namespace kernelrl::common
