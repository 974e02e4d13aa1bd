/** The small part of mvdan-sh's GopherJS API the shell analysis uses (the package ships no types). */
declare module 'mvdan-sh' {
  export interface ShPos {
    Offset(): number;
  }
  export interface ShNode {
    Pos(): ShPos;
    End(): ShPos;
    [field: string]: unknown;
  }
  export interface ShParser {
    Parse(src: string, name: string): ShNode;
  }
  const sh: {
    syntax: {
      NewParser(...options: unknown[]): ShParser;
      NodeType(node: ShNode): string;
      Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    };
  };
  export default sh;
}
