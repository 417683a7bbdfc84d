--[[
Pandoc Lua filter: builds a man page from a frame (docs/man/NAME.SECTION.md)
and the user docs it includes, so the docs are the one source of both.

  ::: {.include file="../sluicectl.md"}
  :::                       the file's sections, up to a "<!-- man:stop -->" line
  ::: {.include file="../user-guide.md" sections="2. 3." intro="yes"}
  :::                       only its level-2 sections whose titles start so
                            (and the text before the first, with intro="yes")
  ::: {.help}
  :::                       the output of "PROGRAM --help" (-M help=PROGRAM)

Included files lose their title (level 1) and their headings move up one
level (## becomes a man .SH); links to other docs keep their text only.
]]

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function read_doc(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("a")
  f:close()
  return pandoc.read(text, "markdown")
end

local function wanted(title, prefixes)
  if prefixes == nil then
    return true
  end
  for p in prefixes:gmatch("%S+") do
    if title:sub(1, #p) == p then
      return true
    end
  end
  return false
end

local function include(div, base)
  local doc = read_doc(base .. "/" .. div.attributes.file)
  local prefixes = div.attributes.sections
  local out, keep = {}, prefixes == nil or div.attributes.intro == "yes"
  for _, b in ipairs(doc.blocks) do
    if b.t == "RawBlock" and b.text:match("man:stop") then
      break
    end
    if b.t == "Header" and b.level == 1 then
      goto continue
    end
    if b.t == "Header" and b.level == 2 then
      keep = wanted(pandoc.utils.stringify(b), prefixes)
    end
    if keep then
      if b.t == "Header" then
        b.level = b.level - 1
      end
      table.insert(out, b)
    end
    ::continue::
  end
  return pandoc.walk_block(pandoc.Div(out), {
    -- Links to other docs are files the reader of a man page does not have.
    Link = function(l)
      if l.target:match("^https?:") then
        return l
      end
      return l.content
    end,
    -- "\|" is how a pipe table on GitHub writes "|" inside code.
    Code = function(c)
      c.text = c.text:gsub("\\|", "|")
      return c
    end,
    -- Section titles in capitals, as man pages write them.
    -- (without the user guide's section numbers: "2. Ports" is PORTS).
    Header = function(h)
      if h.level ~= 1 then
        return nil
      end
      if #h.content > 2 and h.content[1].t == "Str" and h.content[1].text:match("^%d+%.$") then
        h.content:remove(1)
        h.content:remove(1)
      end
      return pandoc.walk_block(h, {Str = function(x) return pandoc.Str(pandoc.text.upper(x.text)) end})
    end,
    -- Pipe tables get equal columns; give the first (a command or option) what it needs.
    Table = function(t)
      if #t.colspecs ~= 2 then
        return nil
      end
      local widest = 0
      for _, body in ipairs(t.bodies) do
        for _, row in ipairs(body.body) do
          local n = #pandoc.utils.stringify(row.cells[1].contents)
          widest = math.max(widest, n)
        end
      end
      local w = math.min(0.4, math.max(0.15, widest / 80))
      t.colspecs[1] = {t.colspecs[1][1], w}
      t.colspecs[2] = {t.colspecs[2][1], 0.95 - w}
      return t
    end,
  }).content
end

function Pandoc(doc)
  local base = dirname(PANDOC_STATE.input_files[1])
  local help = doc.meta.help and pandoc.utils.stringify(doc.meta.help)
  local blocks = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == "Div" and b.classes:includes("include") then
      for _, x in ipairs(include(b, base)) do
        table.insert(blocks, x)
      end
    elseif b.t == "Div" and b.classes:includes("help") then
      assert(help, "a .help block needs -M help=PROGRAM")
      table.insert(blocks, pandoc.CodeBlock(pandoc.pipe(help, {"--help"}, "")))
    else
      table.insert(blocks, b)
    end
  end
  return pandoc.Pandoc(blocks, doc.meta)
end
