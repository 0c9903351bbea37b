package offline

import (
	"strings"
	"testing"
)

// TestCodeOnlyNoteIsQuotedByItsCode: a note whose part read has no prose,
// only a code block (a folder tree), leads with that block as written,
// not with a sentence naming the note; a long block is cut and says so.
func TestCodeOnlyNoteIsQuotedByItsCode(t *testing.T) {
	tree := "```text\n.\n├── 00 - Contribute\n│   └── Templates\n├── 01 - Community\n└── 02 - Expansions\n```\n"
	answer := answerOver(t, map[string]string{
		"meta/Vault Tree Structure.md": "# Vault Tree Structure\n\n%% Made by a script %%\n" + tree,
		"plugins/folder-canvas.md":     "# Folder canvas\n\nDraws a canvas of a folder.\n",
	}, "vault tree structure")
	want := "From [[Vault Tree Structure]]:\n\n" + strings.TrimSuffix(tree, "\n")
	if !strings.HasPrefix(answer, want) {
		t.Errorf("the tree is not quoted:\n%s\nwant prefix:\n%s", answer, want)
	}

	var long strings.Builder
	long.WriteString("# Long listing\n\n```\n")
	for i := 0; i < codeLines+5; i++ {
		long.WriteString("line of the listing\n")
	}
	long.WriteString("```\n")
	c, ok := firstCode(long.String(), "")
	if !ok || len(c.lines) != codeLines || !c.cut || !strings.HasSuffix(c.render(), "(The listing goes on in the note.)") {
		t.Errorf("long listing = %+v, %v", c, ok)
	}
	if _, ok := firstCode("# Empty\n\n```\n\n```\n\nText.\n", ""); ok {
		t.Error("an empty code block is a listing")
	}
	// A block fenced with tildes, to show backtick fences, keeps its
	// tildes: quoted with backticks it would end at its first line of them.
	if c, ok := firstCode("# Fences\n\n~~~md\n```js\nlet x\n```\n~~~\n", ""); !ok || c.render() != "~~~md\n```js\nlet x\n```\n~~~" {
		t.Errorf("tilde-fenced block = %q", c.render())
	}
}

// TestCodeGoesWithTheItemThatIntroducesIt: in a page of commands (each a
// list item ending with a colon, then the command on a line of its own),
// the answer quotes the items about the question with their commands, not
// the item alone ending on its colon, and leaves out the items about other
// things.
func TestCodeGoesWithTheItemThatIntroducesIt(t *testing.T) {
	page := "# lsof\n\n> List open files and the processes that opened them.\n\n" +
		"- Find the processes that have a given file open:\n\n`lsof {{path/to/file}}`\n\n" +
		"- Find the process that opened a local internet port:\n\n`lsof -i :{{port}}`\n\n" +
		"- Only output the process ID:\n\n`lsof -t {{path/to/file}}`\n\n" +
		"- List files opened by the given user:\n\n`lsof -u {{username}}`\n\n" +
		"- Find the process that is listening on a local IPv6 TCP port:\n\n`lsof -i6TCP:{{port}} -sTCP:LISTEN`\n"
	answerStartsWith(t, map[string]string{
		"common/lsof.md": page,
		"common/ls.md":   "# ls\n\n> List the contents of a directory.\n\n- List files one per line:\n\n`ls -1`\n",
	}, "find the process listening on a port", "From [[lsof]]:\n\n"+
		"- Find the process that opened a local internet port:\n  ```\n  lsof -i :{{port}}\n  ```\n"+
		"- Find the process that is listening on a local IPv6 TCP port:\n  ```\n  lsof -i6TCP:{{port}} -sTCP:LISTEN\n  ```\n\n"+
		"(3 more items of this list in the note are about other things.)")
}

// TestStepsKeepTheirCode: a fenced block inside a step belongs to it: the
// steps go on after it with their numbers, the block is quoted under its
// step without the list's indentation, and text after the block reads
// after it.
func TestStepsKeepTheirCode(t *testing.T) {
	blocks := parseBlocks("## Install\n\n1. Install the dependencies:\n   ```sh\n   npm ci\n     --quiet\n   ```\n   It takes a minute.\n2. Start the server.\n3. Open the page.\n", "")
	if len(blocks) != 1 || blocks[0].kind != stepsBlock || len(blocks[0].items) != 3 {
		t.Fatalf("blocks = %+v", blocks)
	}
	want := "1. Install the dependencies:\n   ```sh\n   npm ci\n     --quiet\n   ```\n\n   It takes a minute.\n2. Start the server.\n3. Open the page."
	if got, _ := renderBlock(blocks[0], 0); got != want {
		t.Errorf("steps = %q, want %q", got, want)
	}
	var long strings.Builder
	long.WriteString("- Run this:\n  ```\n")
	for i := 0; i < itemCodeLines+3; i++ {
		long.WriteString("  step\n")
	}
	long.WriteString("  ```\n- Done.\n")
	got, _ := renderBlock(parseBlocks(long.String(), "")[0], 0)
	if strings.Count(got, "step") != itemCodeLines || !strings.Contains(got, "(The listing goes on in the note.)") || !strings.HasSuffix(got, "- Done.") {
		t.Errorf("an item's long code is not cut:\n%s", got)
	}
}

// TestParagraphIntroducesCode: the command a sentence introduces comes
// after the quoted sentence and its citation; a code block after a
// paragraph that does not introduce it is left out as before.
func TestParagraphIntroducesCode(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Deploy.md": "# Deploy\n\n## Build the site\n\nTo build the site for production, run the following command:\n\n```sh\nnpm run build\n```\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n\n```\nnot quoted\n```\n",
	}, "how do I build the site for production",
		"To build the site for production, run the following command: [[Deploy#Build the site]]\n\n```sh\nnpm run build\n```")
	blocks := parseBlocks("The tomatoes went in on Sunday.\n\n```\nnot quoted\n```\n\nThen it rained.\n", "")
	if len(blocks) != 2 || blocks[0].items[0].code != nil {
		t.Errorf("code went with a sentence that does not introduce it: %+v", blocks)
	}
}

// TestChineseQuestionIsAnswered: a question written without spaces finds
// the note by the pairs of characters it shares with it, and the command
// an item introduces with a full-width colon is quoted with it.
func TestChineseQuestionIsAnswered(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"pages.zh/df.md": "# df\n\n> 显示文件系统的磁盘空间使用情况。\n\n- 显示磁盘使用情况：\n\n`df`\n\n- 以可读的形式显示磁盘使用情况：\n\n`df -h`\n",
		"pages.zh/ls.md": "# ls\n\n> 列出目录的内容。\n\n- 每行列出一个文件：\n\n`ls -1`\n",
	}, "怎么查看磁盘使用情况", "From [[df]]:\n\n- 显示磁盘使用情况：\n  ```\n  df\n  ```\n")
}

// TestFullWidthMetadataLineIsLeftOut: "更多信息：<url>。" is a metadata line
// with a full-width colon, left out of a passage as "More information:
// <url>." is.
func TestFullWidthMetadataLineIsLeftOut(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{"> 对 `gzip` 压缩文件调用 `diff`。\n> 更多信息：<https://example.org/zdiff>。\n", "对 `gzip` 压缩文件调用 `diff`。"},
		{"> Call `diff` on gzip files.\n> More information: <https://example.org/zdiff>.\n", "Call `diff` on gzip files."},
	} {
		blocks := parseBlocks(c.content, "")
		if len(blocks) != 1 || len(blocks[0].items) != 1 || blocks[0].items[0].text != c.want {
			t.Errorf("blocks of %q = %+v, want one sentence %q", c.content, blocks, c.want)
		}
	}
}

// answerStartsWith asks q over a vault of files and checks that the
// answer begins with want.
func answerStartsWith(t *testing.T, files map[string]string, q, want string) {
	t.Helper()
	if answer := answerOver(t, files, q); !strings.HasPrefix(answer, want) {
		t.Errorf("answer to %q:\n%s\nwant it to begin:\n%s", q, answer, want)
	}
}
